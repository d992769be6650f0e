import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { Context } from './context.js'
import type { ServiceKey } from './service-key.js'

/** Marks the getters this module installed, so a feature cannot shadow a member of the kernel's own. */
const accessorBrand = Symbol.for('yoke.contextAccessor')

/**
 * Gives every context a read-only property `name` that resolves `key`: `ctx.sessions` is
 * `ctx.get(SessionsKey)`. A feature calls it next to its key and declares the property on
 * `Context` by declaration merging, so the kernel knows no feature while `ctx.<name>` stays a
 * plain prototype getter (no proxy on the hot path). Installing the same name again replaces the
 * getter, so a module evaluated twice is harmless.
 *
 * @param name - the property name
 * @param key - the service it resolves
 * @throws {@link InvalidArgumentError} when `name` is a member of the kernel's `Context`
 * @internal
 */
export function defineContextAccessor<T>(name: string, key: ServiceKey<T>): void {
  const existing = Object.getOwnPropertyDescriptor(Context.prototype, name)
  if (existing !== undefined && !(existing.get !== undefined && accessorBrand in existing.get)) {
    throw new InvalidArgumentError({ argument: 'name', reason: `Context already has a member "${name}"`, value: name })
  }
  const get = function (this: Context): T {
    return this.get(key)
  }
  Object.defineProperty(get, accessorBrand, { value: true })
  Object.defineProperty(Context.prototype, name, { get, configurable: true, enumerable: false })
}
