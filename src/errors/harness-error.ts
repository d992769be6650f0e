import type { ErrorCode } from './codes.js'

const brandsKey = Symbol.for('yoke.error')
/** The frozen brand list of each error class, walked once per class. */
const brandsByClass = new WeakMap<object, readonly string[]>()

function brandsOf(errorClass: object): readonly string[] {
  const known = brandsByClass.get(errorClass)
  if (known !== undefined) return known
  const brands: string[] = []
  let current: unknown = errorClass
  while (typeof current === 'function' && current !== Error) {
    if (Object.hasOwn(current, 'brand')) brands.push((current as unknown as { brand: string }).brand)
    current = Object.getPrototypeOf(current)
  }
  const frozen = Object.freeze(brands)
  brandsByClass.set(errorClass, frozen)
  return frozen
}

/** A class of the {@link HarnessError} hierarchy, as seen by {@link HarnessError.is}. */
export interface HarnessErrorClass<T> {
  /** The instances' prototype. */
  readonly prototype: T
  /** The stable brand name checked by `is()`; equal across ESM and CJS copies. */
  readonly brand: string
}

/**
 * Base class of every error Yoke throws or reports. Route on {@link HarnessError.code}, never on
 * the message; test with the static `is()` of the class you expect, which works across the ESM
 * and CJS copies of the package (unlike `instanceof`).
 *
 * @example
 * ```ts
 * try { ctx.get(myKey) } catch (error) {
 *   if (ServiceMissingError.is(error)) console.log(error.key)
 * }
 * ```
 */
export class HarnessError extends Error {
  /** The brand `is()` checks; every subclass declares its own. */
  static readonly brand: string = 'HarnessError'

  /** The stable machine-readable code of this failure. */
  readonly code: ErrorCode

  /**
   * @param code - the stable code of the failure
   * @param message - a human-readable message that names the offending value
   * @param options - the standard `cause`
   */
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    const brands = brandsOf(new.target)
    this.name = brands[0] ?? 'HarnessError'
    Object.defineProperty(this, brandsKey, { value: brands, enumerable: false })
  }

  /**
   * Whether `value` is an instance of this class (or a subclass), from any loaded copy of Yoke.
   *
   * @param value - anything
   * @returns `true` when `value` carries this class's brand
   */
  static is<T>(this: HarnessErrorClass<T>, value: unknown): value is T {
    if (typeof value !== 'object' || value === null) return false
    try {
      const brands: unknown = (value as { [brandsKey]?: unknown })[brandsKey]
      return Array.isArray(brands) && brands.includes(this.brand)
    } catch {
      // A proxy whose `get` trap throws is not one of ours; `is()` never throws.
      return false
    }
  }
}
