/**
 * The symbol under which a service value may offer an owner-bound facade: `ctx.get(key)` returns
 * `value[bindOwner](ctx)` (cached per context and key), so every registration made through the
 * facade is an effect of `ctx` and is undone when `ctx` disposes.
 *
 * @example
 * ```ts
 * const registry = {
 *   items: new Set<string>(),
 *   [bindOwner](ctx: Context) {
 *     return { register: (item: string) => ctx.effect(() => { registry.items.add(item); return () => { registry.items.delete(item) } }) }
 *   },
 * }
 * ```
 */
export const bindOwner: unique symbol = Symbol.for('yoke.bindOwner')

/** A service value that offers an owner-bound facade of type `F`. */
export interface OwnerBindable<F> {
  /** Returns the facade bound to `owner`. */
  [bindOwner](owner: import('./context.js').Context): F
}
