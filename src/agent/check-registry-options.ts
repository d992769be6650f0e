import type { ValidationIssue } from '../errors/issue.js'
import { InvalidOptionsError } from '../errors/invalid-options-error.js'

/** The keys of `agents.create` options (04-agent.md §13.1). */
export const CREATE_AGENT_KEYS: ReadonlySet<string> = new Set(['id', 'options', 'preset', 'model', 'seed', 'meta', 'setup', 'signal'])
/** The keys of `agents.resume` options (04-agent.md §13.1). */
export const RESUME_AGENT_KEYS: ReadonlySet<string> = new Set(['options', 'preset', 'model', 'setup', 'signal'])

function isAbortSignal(value: unknown): boolean {
  if (value instanceof AbortSignal) return true
  // A signal of another realm (a vm context) passes by shape.
  const candidate = value as { readonly aborted?: unknown; readonly addEventListener?: unknown } | null
  return typeof value === 'object' && candidate !== null && typeof candidate.aborted === 'boolean' && typeof candidate.addEventListener === 'function'
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * Checks the shape of `agents.create` / `agents.resume` options before anything else runs
 * (04-agent.md §13.2 step 1; 00-overview.md naming: an options object → `InvalidOptionsError`):
 * an object, no unknown key, `id` / `preset` strings, `setup` a function, `signal` an
 * `AbortSignal`, `seed` an array, `meta` a plain object. The values inside (`options`, `model`,
 * seed events, `meta` as JSON) are checked by their own validators later.
 *
 * @param options - what the caller passed (`undefined` → `{}`)
 * @param keys - the allowed keys
 * @returns `options` as an object
 * @throws {@link InvalidOptionsError} with every issue, paths `[key]`
 * @internal
 */
export function checkRegistryOptions<T extends object>(options: T | undefined, keys: ReadonlySet<string>): T {
  if (options === undefined) return {} as T
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionsError({ issues: [{ path: [], message: 'must be an options object' }], value: options })
  }
  const record = options as Readonly<Record<string, unknown>>
  const issues: ValidationIssue[] = []
  for (const key of Object.keys(record)) {
    const value = record[key]
    if (!keys.has(key)) issues.push({ path: [key], message: 'unknown option' })
    else if (value === undefined) continue
    else if ((key === 'id' || key === 'preset') && typeof value !== 'string') issues.push({ path: [key], message: 'must be a string' })
    else if (key === 'setup' && typeof value !== 'function') issues.push({ path: [key], message: 'must be a function (ctx) => void | Promise<void>' })
    else if (key === 'signal' && !isAbortSignal(value)) issues.push({ path: [key], message: 'must be an AbortSignal' })
    else if (key === 'seed' && !Array.isArray(value)) issues.push({ path: [key], message: 'must be an array of session events' })
    else if (key === 'meta' && !isPlainObject(value)) issues.push({ path: [key], message: 'must be a plain JSON object (stored as the session header metadata)' })
  }
  if (issues.length > 0) {
    const first = issues[0] as ValidationIssue
    throw new InvalidOptionsError({ issues, value: first.path.length === 0 ? options : record[first.path[0] as string] })
  }
  return options
}
