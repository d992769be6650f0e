/**
 * The JSON text of a value a tool body returned: what the model sees for anything but a string or
 * a `toolResult()`.
 *
 * @module
 */

/** {@link toolJsonText} succeeded: the value's JSON text. */
export interface ToolJsonText {
  /** Always `true`. */
  readonly ok: true
  /** The compact JSON text (`JSON.stringify` of the value, keys in their own order). */
  readonly text: string
}

/** {@link toolJsonText} failed: where and why the value is not JSON. */
export interface ToolJsonProblem {
  /** Always `false`. */
  readonly ok: false
  /** The access path of the offending value in bracket form (`rows[2].when`), `''` for the value itself. */
  readonly path: string
  /** What the offending value is (`a Date instance, not a plain object`, `a cycle (it contains itself)`, `a bigint`, …). */
  readonly problem: string
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  if (IDENTIFIER.test(key)) return path === '' ? key : `${path}.${key}`
  return `${path}[${JSON.stringify(key)}]`
}

/** The class name of a non-plain object, for the message; `'object'` when it has none. */
function className(value: object): string {
  const prototype: unknown = Object.getPrototypeOf(value)
  const owner: unknown =
    typeof prototype === 'object' && prototype !== null
      ? Object.getOwnPropertyDescriptor(prototype, 'constructor')?.value
      : undefined
  const name: unknown = typeof owner === 'function' ? owner.name : undefined
  return typeof name === 'string' && name.length > 0 ? name : 'object'
}

function withArticle(name: string): string {
  return /^[AEIOUaeiou]/.test(name) ? `an ${name}` : `a ${name}`
}

/** Whether `value` is a plain object: its prototype is `Object.prototype` (of any realm) or `null`. */
function isPlain(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype === null || prototype === Object.prototype) return true
  // Another realm's Object.prototype: itself without a prototype, and made by a function named Object.
  return typeof prototype === 'object' && Object.getPrototypeOf(prototype) === null && className(value) === 'Object'
}

/** Thrown inside the walk to stop at the first offending value. */
class NotJson {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {}
}

/** One walk: the ancestors on the current path (for cycles) and the text built so far. */
class Walk {
  readonly #ancestors = new Set<object>()

  text(value: unknown, path: string): string {
    switch (typeof value) {
      case 'string':
        return JSON.stringify(value)
      case 'boolean':
        return value ? 'true' : 'false'
      case 'number':
        if (!Number.isFinite(value)) throw new NotJson(path, `a non-finite number (${value})`)
        return JSON.stringify(value)
      case 'object':
        return value === null ? 'null' : this.#container(value, path)
      case 'undefined':
        throw new NotJson(path, 'undefined')
      default:
        throw new NotJson(path, `a ${typeof value}`)
    }
  }

  #container(value: object, path: string): string {
    if (this.#ancestors.has(value)) throw new NotJson(path, 'a cycle (it contains itself)')
    const isArray = Array.isArray(value)
    if (!isArray && !isPlain(value))
      throw new NotJson(path, `${withArticle(className(value))} instance, not a plain object`)
    this.#ancestors.add(value)
    let text: string
    if (isArray) {
      const parts: string[] = []
      const array = value as readonly unknown[]
      for (let index = 0; index < array.length; index++) {
        if (!Object.hasOwn(array, index)) throw new NotJson(join(path, index), 'a hole in a sparse array')
        parts.push(this.text(array[index], join(path, index)))
      }
      text = `[${parts.join(',')}]`
    } else {
      const parts: string[] = []
      const record = value as Record<string, unknown>
      for (const key of Object.keys(record)) {
        const child = record[key]
        // As JSON.stringify does: an absent optional field is left out.
        if (child === undefined) continue
        parts.push(`${JSON.stringify(key)}:${this.text(child, join(path, key))}`)
      }
      text = `{${parts.join(',')}}`
    }
    this.#ancestors.delete(value)
    return text
  }
}

/**
 * The JSON text of `value`, strictly: `null`, booleans, finite numbers, strings, arrays without
 * holes and plain objects (prototype `Object.prototype` or `null`), nested to any depth the stack
 * allows. An object property whose value is `undefined` is left out, as `JSON.stringify` does;
 * anything else — a function, a symbol, a bigint, `undefined` in an array, `NaN` or `±Infinity`,
 * a class instance (`Date`, `Map`, a boxed primitive), a cycle — is refused with its path. Each
 * property is read once and `toJSON` is never called, so what is checked is what is sent. A getter
 * that throws propagates.
 *
 * @example
 * ```ts
 * toolJsonText({ rows: [1, 2] }) // { ok: true, text: '{"rows":[1,2]}' }
 * toolJsonText({ rows: [{ when: new Date() }] }) // { ok: false, path: 'rows[0].when', problem: 'a Date instance, not a plain object' }
 * ```
 *
 * @internal
 * @param value - what the body returned
 * @returns the text, or the first offending path and what it is
 */
export function toolJsonText(value: unknown): ToolJsonText | ToolJsonProblem {
  try {
    return { ok: true, text: new Walk().text(value, '') }
  } catch (error) {
    if (error instanceof NotJson) return { ok: false, path: error.path, problem: error.problem }
    throw error
  }
}
