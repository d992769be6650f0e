/**
 * Generic test helpers shared by the kernel, harness and session suites: what a call threw or a
 * promise rejected with, captured contexts, effect-tree look-ups, `kernel/error` recording and
 * plain-value utilities (freeze, clone, frozen checks).
 *
 * @module
 */
import type { Context, KernelErrorEvent } from 'yoke'
import type { EffectNode } from '../../src/kernel/index.js'

/** The reason `promise` rejects with; throws when it fulfils instead. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected the promise to reject')
}

/** What `action` throws when called; throws when it returns instead. */
export function thrownBy(action: () => unknown): unknown {
  try {
    action()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to throw')
}

/** The context a plugin captured; throws when it captured none. */
export function requireContext(value: Context | undefined): Context {
  if (value === undefined) throw new Error('the plugin did not capture its context')
  return value
}

/** Whether `value` is an array or an object whose prototype is `Object.prototype` or `null`. */
export function isPlain(value: unknown): value is Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return true
  if (typeof value !== 'object' || value === null) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** Freezes plain objects and arrays all the way down, except the values in `keep`; everything else is kept as is. */
export function deepFreeze<T>(value: T, keep: ReadonlySet<unknown> = new Set()): T {
  if (keep.has(value) || !isPlain(value)) return value
  for (const item of Object.values(value)) deepFreeze(item, keep)
  return Object.freeze(value)
}

/** Copies plain objects and arrays all the way down; everything else is kept by reference. */
export function cloneOptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneOptions)
  if (!isPlain(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cloneOptions(item)]))
}

/** Whether every object and array reachable from `value` (itself included) is frozen. */
export function isDeepFrozen(value: unknown): boolean {
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const item = pending.pop()
    if (typeof item !== 'object' || item === null) continue
    if (!Object.isFrozen(item)) return false
    for (const child of Object.values(item)) pending.push(child)
  }
  return true
}

/** The first node labelled `label` in the effect tree under `node` (itself included), depth first. */
export function findNode(node: EffectNode, label: string): EffectNode | undefined {
  if (node.label === label) return node
  for (const child of node.children) {
    const found = findNode(child, label)
    if (found !== undefined) return found
  }
  return undefined
}

/** The direct child of `tree` labelled `label`; throws when there is none. */
export function nodeOf(tree: EffectNode, label: string): EffectNode {
  const found = tree.children.find((node) => node.label === label)
  if (found === undefined) throw new Error(`no effect node ${label}`)
  return found
}

/** Records every `kernel/error` reported on `root`, in order, into the returned array. */
export function recordKernelErrors(root: Context): KernelErrorEvent[] {
  const events: KernelErrorEvent[] = []
  root.on('kernel/error', (event) => {
    events.push(event)
  })
  return events
}
