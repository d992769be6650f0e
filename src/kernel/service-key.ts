import { InvalidArgumentError } from '../errors/invalid-argument-error.js'

const serviceKeyBrand = Symbol.for('yoke.serviceKey')
const keyNamePattern = /^[a-z0-9@][a-z0-9@._/-]{0,127}$/

/**
 * A typed handle for a service. Keys with equal names are equal, so the ESM and CJS copies of
 * Yoke agree on them. Create one with {@link defineService}.
 */
export interface ServiceKey<T> {
  /** The key name: `'tools'` for core services, `'acme-billing/ledger'` for a plugin's. */
  readonly name: string
  /** What the service is for. */
  readonly description: string | undefined
  /** Type-level only: the service's type. Never set at run time. */
  readonly __type?: () => T
}

/**
 * Declares a service key. Registers nothing; provide a value with `ctx.provide(key, value)`.
 *
 * @param name - `^[a-z0-9@][a-z0-9@._/-]{0,127}$`; namespace plugin keys (`'acme-billing/ledger'`)
 * @param description - what the service is for
 * @returns a frozen key
 * @throws {@link InvalidArgumentError} when the name is malformed or the description is not a string
 * @example
 * ```ts
 * const Ledger = defineService<Ledger>('acme-billing/ledger', 'the billing ledger')
 * ctx.provide(Ledger, createLedger())
 * ```
 */
export function defineService<T>(name: string, description?: string): ServiceKey<T> {
  if (typeof name !== 'string' || !keyNamePattern.test(name)) {
    throw new InvalidArgumentError({
      argument: 'name',
      reason: `service key name ${JSON.stringify(name)} must match ${keyNamePattern}`,
      value: name,
    })
  }
  if (description !== undefined && typeof description !== 'string') {
    throw new InvalidArgumentError({ argument: 'description', reason: 'must be a string', value: description })
  }
  return Object.freeze({ name, description, [serviceKeyBrand]: true }) as ServiceKey<T>
}

/** Whether `value` is a service key from any copy of Yoke. */
export function isServiceKey(value: unknown): value is ServiceKey<unknown> {
  return typeof value === 'object' && value !== null && serviceKeyBrand in value
}

/**
 * Reads a key name from a key or a key-name string, validating the string.
 *
 * @internal
 */
export function keyNameOf<T>(key: ServiceKey<T> | string): string {
  if (typeof key === 'string') {
    if (!keyNamePattern.test(key)) {
      throw new InvalidArgumentError({
        argument: 'key',
        reason: `key name ${JSON.stringify(key)} is malformed`,
        value: key,
      })
    }
    return key
  }
  if (!isServiceKey(key)) throw new InvalidArgumentError({ argument: 'key', reason: 'not a service key', value: key })
  return key.name
}
