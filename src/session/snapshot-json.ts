import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { SessionErrorLocation } from '../errors/session-error.js'
import { SessionEventError } from '../errors/session-event-error.js'
import type { JsonArray, JsonObject, JsonValue } from './json-value.js'

/** An own property key as `Reflect.ownKeys` lists it. */
type OwnKey = string | symbol

/** One container on the current path of the walk; frames are reused by depth. */
interface Frame {
  source: object
  /** The copy being filled; `undefined` when only validating. */
  copy: unknown[] | Record<string, unknown> | undefined
  isArray: boolean
  /** Object: the keys to visit. Array: `undefined`, or its own keys when they are not exactly indices + `length`. */
  keys: OwnKey[] | undefined
  /** Object: whether `keys` are known to be enumerable strings (else each is checked on its visit). */
  keysChecked: boolean
  /** Array: the first missing index, or -1. */
  hole: number
  length: number
  /** The position of the next child; the one being visited is `index - 1`. */
  index: number
}

/** Ancestors up to this depth are found by a scan of the stack; deeper ones through a `Set`. */
const SCANNED_DEPTH = 32
/**
 * Copies {@link snapshotJson} returned that were recorded with {@link shareSnapshot}: deep-frozen
 * lossless JSON, never changed, so a sharing snapshot holding one keeps it instead of copying it
 * (and {@link isJsonValue} skips it). Only hot values are recorded (a weak set is not free).
 */
const knownJson = new WeakSet<object>()

/**
 * Records a result of {@link snapshotJson} so a later sharing snapshot keeps it (e.g. a stream
 * chunk the model boundary admitted, which the loop then appends inside its `assistant/chunk`).
 *
 * @param copy - a value {@link snapshotJson} returned
 * @returns `copy`
 * @internal
 */
export function shareSnapshot<T extends JsonValue>(copy: T): T {
  if (typeof copy === 'object' && copy !== null) knownJson.add(copy)
  return copy
}
/**
 * Lists an adapter produced with `JSON.parse` and handed out at once (a load's events), so
 * {@link adoptParsedJson} may freeze them in place. One entry per list, not per element: a large
 * weak set slows every garbage collection.
 */
const parsedLists = new WeakSet<readonly unknown[]>()

/**
 * Marks a fresh list of `JSON.parse` results (a JSONL or memory `load`): the persistence
 * coordinator may then adopt it with {@link adoptParsedJson} instead of having a seed copy it.
 * The values stay as they are (an adapter's load returns fresh, mutable objects, A4).
 *
 * @param values - fresh `JSON.parse` results, plain data
 * @internal
 */
export function markParsedJson(values: readonly unknown[]): void {
  parsedLists.add(values)
}

/**
 * Adopts a list marked by {@link markParsedJson}: deep-freezes it in place and, when every value
 * is lossless JSON, freezes the list and records it like {@link shareSnapshot}, so a seed from it
 * (the read gates, a resume) keeps its values instead of walking and copying each again.
 * `JSON.parse` yields plain, dense, acyclic, string-keyed data; what is checked is what it cannot
 * rule out (an overflowing literal parses to `Infinity`, `-0` to negative zero) and what a
 * wrapping adapter could have put in since (another prototype, a non-JSON value, a node seen
 * twice). A list that fails stays unrecorded (parts of it may be frozen), and the full snapshot
 * of a seed then rejects or copies it as usual.
 *
 * @param values - a list an adapter's `load` returned
 * @returns whether it was recorded
 * @internal
 */
export function adoptParsedJson(values: readonly unknown[]): boolean {
  if (!parsedLists.has(values) || Object.isFrozen(values) || !Array.isArray(values)) return false
  parsedLists.delete(values)
  const pending: object[] = []
  for (const value of values) {
    if (typeof value !== 'object' || value === null) return false
    pending.push(value)
    while (pending.length > 0) {
      const node = pending.pop() as Record<string, unknown>
      if (Object.isFrozen(node)) return false
      const isArray = Array.isArray(node)
      if (Object.getPrototypeOf(node) !== (isArray ? Array.prototype : Object.prototype)) return false
      const keys = isArray ? undefined : Object.keys(node)
      const length = keys === undefined ? (node as unknown as unknown[]).length : keys.length
      for (let index = 0; index < length; index++) {
        const child = keys === undefined ? (node as unknown as unknown[])[index] : node[keys[index] as string]
        switch (typeof child) {
          case 'object':
            if (child !== null) pending.push(child)
            break
          case 'number':
            if (child - child !== 0 || (child === 0 && 1 / child < 0)) return false
            break
          case 'string':
          case 'boolean':
            break
          default:
            return false
        }
      }
      Object.freeze(node)
    }
  }
  knownJson.add(Object.freeze(values))
  return true
}

/**
 * Whether `value` was recorded as deep-frozen lossless JSON ({@link shareSnapshot},
 * {@link adoptParsedJson}).
 *
 * @internal
 */
export function isSharedSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && knownJson.has(value)
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
const functionSource = Function.prototype.toString
const isEnumerable = Object.prototype.propertyIsEnumerable

function primitiveReason(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      if (value - value !== 0) return 'non-finite number'
      return value === 0 && 1 / value < 0 ? 'negative zero' : undefined
    case 'object':
      return value === null ? undefined : 'not a plain object'
    default:
      return typeof value
  }
}

/** Whether `candidate` is the `prototype` of a native constructor `name` of some realm (never forgeable: that property is read-only). */
function isIntrinsicPrototype(candidate: object, name: string): boolean {
  const owner: unknown = Object.getOwnPropertyDescriptor(candidate, 'constructor')?.value
  return (
    typeof owner === 'function' &&
    Object.getOwnPropertyDescriptor(owner, 'prototype')?.value === candidate &&
    functionSource.call(owner) === `function ${name}() { [native code] }`
  )
}

function segment(key: OwnKey | number): string {
  if (typeof key === 'number') return `[${key}]`
  if (typeof key === 'symbol') return `[${String(key)}]`
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

function firstHole(array: object, length: number): number {
  for (let index = 0; index < length; index++) if (!Object.hasOwn(array, index)) return index
  return -1
}

/** One validating (and optionally copying) walk over a value; one instance per call. */
class JsonWalk {
  readonly stack: Frame[] = []
  depth = 0
  /** Why the walk stopped; `undefined` while the value is still JSON. */
  reason: string | undefined = undefined
  /** Set when the offending key is an array's extra key rather than its current child. */
  extraKey: OwnKey | undefined = undefined
  private readonly copying: boolean
  private readonly sharing: boolean
  private deepAncestors: Set<object> | undefined = undefined
  private foreignObjectPrototype: object | undefined = undefined
  private foreignArrayPrototype: object | undefined = undefined

  constructor(copying: boolean, sharing: boolean) {
    this.copying = copying
    this.sharing = sharing
  }

  /** Walks a non-null object; returns the frozen copy, or `undefined` with {@link reason} set. */
  run(root: object): unknown {
    const rootCopy = this.enter(root)
    const stack = this.stack
    const copying = this.copying
    while (this.depth > 0 && this.reason === undefined) {
      const frame = stack[this.depth - 1]!
      const position = frame.index
      if (position === frame.length) {
        if (frame.isArray && frame.keys !== undefined && this.rejectExtraKey(frame)) break
        this.leave(frame)
        continue
      }
      frame.index = position + 1
      let key = ''
      let child: unknown
      if (frame.isArray) {
        if (position === frame.hole) {
          this.reason = 'sparse array'
          break
        }
        child = (frame.source as unknown[])[position]
      } else {
        const ownKey = frame.keys![position]!
        if (!frame.keysChecked) {
          if (typeof ownKey === 'symbol') {
            this.reason = 'symbol key'
            break
          }
          if (!isEnumerable.call(frame.source, ownKey)) {
            this.reason = 'non-enumerable key'
            break
          }
        }
        key = ownKey as string
        child = (frame.source as Record<string, unknown>)[key]
      }
      let stored = child
      if (typeof child === 'object' && child !== null) {
        // A recorded copy (shareSnapshot) is deep-frozen lossless JSON already: kept, not walked again.
        if (this.sharing && knownJson.has(child)) stored = child
        else {
          stored = this.enter(child)
          if (this.reason !== undefined) break
        }
      } else {
        const reason = primitiveReason(child)
        if (reason !== undefined) {
          this.reason = reason
          break
        }
      }
      if (!copying) continue
      if (frame.isArray) {
        ;(frame.copy as unknown[]).push(stored)
      } else {
        const copy = frame.copy as Record<string, unknown>
        // An inherited name (`__proto__`, `toString`, a frozen or polluted prototype) must become an own data property.
        if (key in copy)
          Object.defineProperty(copy, key, { value: stored, writable: true, enumerable: true, configurable: true })
        else copy[key] = stored
      }
    }
    return this.reason === undefined ? rootCopy : undefined
  }

  /** The access path of the offending value, from `root`. */
  path(root: string): string {
    let path = root
    const last = this.depth - 1
    for (let level = 0; level <= last; level++) {
      const frame = this.stack[level]!
      if (level === last && this.extraKey !== undefined) path += segment(this.extraKey)
      else path += segment(frame.isArray ? frame.index - 1 : frame.keys![frame.index - 1]!)
    }
    return path
  }

  /** Validates a container and pushes its frame; returns its (empty) copy. */
  private enter(value: object): unknown {
    if (this.isAncestor(value)) {
      this.reason = 'cycle'
      return undefined
    }
    const prototype: object | null = Object.getPrototypeOf(value)
    let isArray = false
    let keys: OwnKey[] | undefined
    let keysChecked = true
    let hole = -1
    let length: number
    if (Array.isArray(value)) {
      if (prototype !== Array.prototype && !this.isArrayPrototype(prototype)) {
        this.reason = 'array subclass'
        return undefined
      }
      isArray = true
      length = (value as unknown[]).length
      // Only a proxy can report a length that is not an array length.
      if (!Number.isSafeInteger(length) || length < 0) {
        this.reason = 'invalid array length'
        return undefined
      }
      const ownKeys = Reflect.ownKeys(value)
      // Ordinary arrays list their indices first, then `length`: this shape means dense with no extra key.
      if (ownKeys.length !== length + 1 || ownKeys[length] !== 'length') {
        keys = ownKeys
        hole = firstHole(value, length)
      }
    } else {
      if (prototype !== null && prototype !== Object.prototype && !this.isObjectPrototype(prototype)) {
        this.reason = 'not a plain object'
        return undefined
      }
      keys = Object.keys(value)
      const ownKeys = Reflect.ownKeys(value)
      if (ownKeys.length !== keys.length) {
        keys = ownKeys
        keysChecked = false
      }
      length = keys.length
    }
    const copy = this.copying ? (isArray ? [] : {}) : undefined
    const level = this.depth++
    let frame = this.stack[level]
    if (frame === undefined) {
      frame = { source: value, copy, isArray, keys, keysChecked, hole, length, index: 0 }
      this.stack.push(frame)
    } else {
      frame.source = value
      frame.copy = copy
      frame.isArray = isArray
      frame.keys = keys
      frame.keysChecked = keysChecked
      frame.hole = hole
      frame.length = length
      frame.index = 0
    }
    if (level >= SCANNED_DEPTH) (this.deepAncestors ??= new Set()).add(value)
    return copy
  }

  private leave(frame: Frame): void {
    const level = --this.depth
    if (level >= SCANNED_DEPTH) this.deepAncestors!.delete(frame.source)
    if (frame.copy !== undefined) Object.freeze(frame.copy)
  }

  private isAncestor(value: object): boolean {
    const scanned = Math.min(this.depth, SCANNED_DEPTH)
    for (let level = 0; level < scanned; level++) if (this.stack[level]!.source === value) return true
    return this.depth > SCANNED_DEPTH && this.deepAncestors!.has(value)
  }

  private isObjectPrototype(prototype: object): boolean {
    if (prototype === this.foreignObjectPrototype) return true
    if (Object.getPrototypeOf(prototype) !== null || !isIntrinsicPrototype(prototype, 'Object')) return false
    this.foreignObjectPrototype = prototype
    return true
  }

  private isArrayPrototype(prototype: object | null): boolean {
    if (prototype === null) return false
    if (prototype === this.foreignArrayPrototype) return true
    if (!isIntrinsicPrototype(prototype, 'Array')) return false
    this.foreignArrayPrototype = prototype
    return true
  }

  /** Finds an array's first own key that is neither an element index nor `length`; `false` if none. */
  private rejectExtraKey(frame: Frame): boolean {
    for (const key of frame.keys!) {
      if (
        key === 'length' ||
        (typeof key === 'string' && String(Number(key) >>> 0) === key && Number(key) < frame.length)
      )
        continue
      this.extraKey = key
      this.reason = typeof key === 'symbol' ? 'symbol key' : 'extra array key'
      return true
    }
    return false
  }
}

/**
 * Whether `value` is lossless JSON (02-session.md §2): what {@link snapshotJson} accepts. Reads
 * each property once, like {@link snapshotJson}; a throwing getter's error propagates.
 *
 * @param value - anything
 * @returns `true` when {@link snapshotJson} would accept `value`
 */
export function isJsonValue(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return primitiveReason(value) === undefined
  if (knownJson.has(value)) return true
  const walk = new JsonWalk(false, true)
  walk.run(value)
  return walk.reason === undefined
}

/**
 * Validates and copies `value` as lossless JSON (02-session.md §2) in one iterative walk: any
 * depth works, each property and slot is read exactly once, shared sub-objects are copied
 * separately, and every object and array of the copy is frozen. The caller's value is never
 * modified. Copies are plain objects in the original key order; `toJSON` is ignored. With
 * `sharing`, a value that is an earlier result recorded with `shareSnapshot` (deep-frozen,
 * immutable) is kept instead of copied again, at the root or anywhere inside (the commit point's payload
 * copy: a copy would differ only by identity); without it every object is new.
 *
 * @example
 * ```ts
 * const data = snapshotJson({ turn: 1 }, 'data') // a frozen copy
 * snapshotJson({ a: [1, 2n] }, 'data') // throws NOT_JSON, path 'data.a[1]', reason 'bigint'
 * ```
 *
 * @param value - the candidate value
 * @param root - the name that starts error paths (`'data'`, `'options'`)
 * @param location - the session, type, seq or seed index to name in the error
 * @param sharing - keep recorded earlier results found in `value` instead of copying them
 * @returns a deep-frozen copy (primitives are returned as they are)
 * @throws {@link SessionEventError} `NOT_JSON` with the `path` of the first offending value and a `reason`
 */
export function snapshotJson(
  value: unknown,
  root = 'value',
  location?: SessionErrorLocation,
  sharing = false,
): JsonValue {
  let reason: string | undefined
  let path = root
  if (typeof value !== 'object' || value === null) {
    reason = primitiveReason(value)
    if (reason === undefined) return value as JsonValue
  } else {
    if (sharing && knownJson.has(value)) return value as JsonValue
    const walk = new JsonWalk(true, sharing)
    const copy = walk.run(value)
    if (walk.reason === undefined) return copy as JsonValue
    reason = walk.reason
    path = walk.path(root)
  }
  throw new SessionEventError({
    ...location,
    code: ErrorCode.NOT_JSON,
    detail: `${path} is not lossless JSON (${reason})`,
    path,
    reason,
  })
}

function isJsonArray(value: JsonArray | JsonObject): value is JsonArray {
  return Array.isArray(value)
}

/**
 * Structural equality of two JSON values; object key order is ignored. Iterative, so any depth works.
 *
 * @param left - a JSON value
 * @param right - another JSON value
 * @returns `true` when both hold the same data
 */
export function jsonEquals(left: JsonValue, right: JsonValue): boolean {
  const pending: JsonValue[] = [left, right]
  /** Container pairs already compared or being compared: a cyclic value cannot loop forever. */
  let compared: Map<object, Set<object>> | undefined
  while (pending.length > 0) {
    const second = pending.pop()!
    const first = pending.pop()!
    if (first === second) continue
    if (typeof first !== 'object' || typeof second !== 'object' || first === null || second === null) return false
    compared ??= new Map()
    let partners = compared.get(first)
    if (partners === undefined) compared.set(first, (partners = new Set()))
    else if (partners.has(second)) continue
    partners.add(second)
    const firstIsArray = isJsonArray(first)
    if (firstIsArray !== isJsonArray(second)) return false
    if (isJsonArray(first)) {
      const secondArray = second as JsonArray
      if (first.length !== secondArray.length) return false
      for (let index = 0; index < first.length; index++) pending.push(first[index]!, secondArray[index]!)
    } else {
      const secondObject = second as JsonObject
      const keys = Object.keys(first)
      if (keys.length !== Object.keys(secondObject).length) return false
      for (const key of keys) {
        if (!Object.hasOwn(secondObject, key)) return false
        pending.push(first[key]!, secondObject[key]!)
      }
    }
  }
  return true
}

/** One open container of {@link canonicalJson}. */
interface TextFrame {
  container: JsonArray | JsonObject
  /** Sorted keys of an object; `undefined` for an array. */
  keys: string[] | undefined
  length: number
  index: number
}

/**
 * The JSON text of `value` with object keys sorted by UTF-16 code units (whitespace-free, like
 * `JSON.stringify`), so structurally equal values give equal text. Iterative, so any depth works.
 *
 * @param value - a JSON value, e.g. a result of {@link snapshotJson}
 * @returns the canonical JSON text
 */
export function canonicalJson(value: JsonValue): string {
  if (typeof value !== 'object' || value === null) return primitiveText(value)
  const stack: TextFrame[] = []
  /** The containers on the current path: meeting one again is a cycle. */
  const open = new Set<object>()
  let depth = 0
  let text = ''
  let next: JsonArray | JsonObject | undefined = value
  while (true) {
    if (next !== undefined) {
      if (open.has(next))
        throw new InvalidArgumentError({ argument: 'value', reason: 'is not JSON: it contains a cycle' })
      open.add(next)
      const keys = isJsonArray(next) ? undefined : Object.keys(next).sort()
      const length = keys === undefined ? (next as JsonArray).length : keys.length
      text += keys === undefined ? '[' : '{'
      const reused = stack[depth]
      if (reused === undefined) stack.push({ container: next, keys, length, index: 0 })
      else {
        reused.container = next
        reused.keys = keys
        reused.length = length
        reused.index = 0
      }
      depth++
      next = undefined
    }
    const frame = stack[depth - 1]!
    const position = frame.index
    if (position === frame.length) {
      text += frame.keys === undefined ? ']' : '}'
      open.delete(frame.container)
      if (--depth === 0) return text
      continue
    }
    frame.index = position + 1
    if (position > 0) text += ','
    let child: JsonValue
    if (frame.keys === undefined) child = (frame.container as JsonArray)[position]!
    else {
      const key = frame.keys[position]!
      text += `${JSON.stringify(key)}:`
      child = (frame.container as JsonObject)[key]!
    }
    if (typeof child === 'object' && child !== null) next = child
    else text += primitiveText(child)
  }
}

/** A primitive's JSON text; `undefined`, a bigint, a function or a symbol is not JSON. */
function primitiveText(value: unknown): string {
  const kind = typeof value
  if (kind === 'string' || kind === 'number' || kind === 'boolean' || value === null) return JSON.stringify(value)
  throw new InvalidArgumentError({
    argument: 'value',
    reason: `is not JSON: it holds a ${kind}`,
    value: kind === 'bigint' ? String(value) : undefined,
  })
}
