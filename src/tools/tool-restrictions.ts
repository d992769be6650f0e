import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import { ToolRestrictionError } from '../errors/tool-restriction-error.js'

/** The filters of `ToolRegistry.restrict`; copied when the restriction is made. */
export interface ToolRestrictOptions {
  /**
   * Only these inherited names stay visible; tools registered later are excluded. An empty list
   * counts as absent.
   *
   * @default no allow filter
   */
  readonly allow?: readonly string[]
  /**
   * These inherited names are hidden; tools registered later are admitted. An empty list counts
   * as absent.
   *
   * @default no deny filter
   */
  readonly deny?: readonly string[]
}

/** @internal One live restriction on a scope: the copied filters. */
export interface ToolRestriction {
  /** The allowed names; `undefined` admits every name. */
  readonly allow: ReadonlySet<string> | undefined
  /** The denied names; `undefined` denies none. */
  readonly deny: ReadonlySet<string> | undefined
  /** Every listed name, sorted (the `tools/change` names). */
  readonly names: readonly string[]
}

function readNames(options: Record<string, unknown>, field: 'allow' | 'deny'): ReadonlySet<string> | undefined {
  const value = options[field]
  if (value === undefined) return undefined
  if (!Array.isArray(value)) {
    throw new InvalidArgumentError({ argument: field, reason: `${field} must be an array of tool names`, value })
  }
  const names = new Set<string>()
  for (const name of value as unknown[]) {
    if (typeof name !== 'string') {
      throw new InvalidArgumentError({
        argument: field,
        reason: `${field} must list tool names (strings)`,
        value: name,
      })
    }
    names.add(name)
  }
  return names.size === 0 ? undefined : names
}

/**
 * Reads and copies restriction filters: the shape, then `'empty'` when neither list names a tool.
 *
 * @param options - the caller's `{ allow?, deny? }`
 * @returns the copied restriction
 * @throws {@link InvalidArgumentError} for a malformed value; {@link ToolRestrictionError} `'empty'`
 * @internal
 */
export function readRestriction(options: unknown): ToolRestriction {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError({
      argument: 'options',
      reason: 'a restriction must be an object { allow?, deny? }',
      value: options,
    })
  }
  const record = options as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (key !== 'allow' && key !== 'deny') {
      throw new InvalidArgumentError({
        argument: 'options',
        reason: `"${key}" is not a restriction field (use allow or deny)`,
        value: options,
      })
    }
  }
  const allow = readNames(record, 'allow')
  const deny = readNames(record, 'deny')
  if (allow === undefined && deny === undefined) throw new ToolRestrictionError({ problem: 'empty' })
  const names = Object.freeze([...new Set([...(allow ?? []), ...(deny ?? [])])].sort())
  return Object.freeze({ allow, deny, names })
}

/**
 * Checks that every listed name is one the scope inherits.
 *
 * @param restriction - the copied restriction
 * @param inherited - the names in the global layer and the scope's ancestors' layers
 * @throws {@link ToolRestrictionError} `'unknown-name'` with the unknown names (listed order) and the known ones, sorted
 * @internal
 */
export function checkRestrictedNames(restriction: ToolRestriction, inherited: ReadonlySet<string>): void {
  const listed = [...new Set([...(restriction.allow ?? []), ...(restriction.deny ?? [])])]
  const unknown = listed.filter((name) => !inherited.has(name))
  if (unknown.length > 0)
    throw new ToolRestrictionError({ problem: 'unknown-name', names: unknown, known: [...inherited].sort() })
}

/**
 * Whether every restriction admits a name: `allow` absent or listing it, and `deny` not listing it.
 *
 * @param restrictions - the restrictions of one scope
 * @param name - a tool name
 * @returns `true` when the name passes them all
 * @internal
 */
export function admitsAll(restrictions: readonly ToolRestriction[] | undefined, name: string): boolean {
  if (restrictions === undefined) return true
  for (const restriction of restrictions) {
    if (restriction.allow !== undefined && !restriction.allow.has(name)) return false
    if (restriction.deny?.has(name) === true) return false
  }
  return true
}
