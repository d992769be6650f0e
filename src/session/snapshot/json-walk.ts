/**
 * The one iterative walk behind the lossless-JSON checks: validates a value of any depth, reading
 * each property once, and optionally builds its frozen copy.
 *
 * @module
 */
import { isSharedObject } from './shared-snapshots.js'

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
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
const functionSource = Function.prototype.toString
const isEnumerable = Object.prototype.propertyIsEnumerable

/** Why a primitive is not lossless JSON; `undefined` when it is. */
export function primitiveReason(value: unknown): string | undefined {
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

/**
 * One validating (and optionally copying) walk over a value; one instance per call.
 *
 * @internal
 */
export class JsonWalk {
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

  /**
   * @param copying - build a frozen copy while validating
   * @param sharing - keep values recorded as shared snapshots instead of walking them
   */
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
        if (this.sharing && isSharedObject(child)) stored = child
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
