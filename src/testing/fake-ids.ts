import type { ValidationIssue } from '../errors/issue.js'
import type { IdSource } from '../kernel/host-services.js'
import { isPlainObject } from '../kernel/is-plain-object.js'
import { type OptionRule, optionIssues, optionRule, throwOptionIssues } from '../kernel/option-issues.js'

/** Options of {@link fakeIds}. */
export interface FakeIdsOptions {
  /**
   * Prefixes by kind, replacing the kind's first letter (`{ message: 'm' }`).
   *
   * @default the first letter of each kind
   */
  readonly prefixes?: Readonly<Record<string, string>>
}

/** The rules of `fakeIds` options (factory options → `InvalidOptionsError`). */
const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({ prefixes: optionRule.plainObject })

/** The issues of `fakeIds` options: the shared check, then one per prefix that is not a non-empty string. */
function fakeIdsIssues(options: FakeIdsOptions | undefined): ValidationIssue[] {
  const issues = optionIssues(options, optionRules, '{ prefixes? }')
  const prefixes: unknown = options?.prefixes
  if (issues.length > 0 || !isPlainObject(prefixes)) return issues
  for (const [kind, prefix] of Object.entries(prefixes)) {
    if (typeof prefix !== 'string' || prefix.length === 0)
      issues.push({ path: ['prefixes', kind], message: 'must be a non-empty string' })
  }
  return issues
}

/**
 * Creates a deterministic id source: per kind, a prefix (the kind's first letter unless
 * overridden) and a counter from 1, so `ids('session')` gives `s1`, then `s2`, and
 * `ids('compaction')` gives `c1`.
 *
 * @param options - prefix overrides
 * @returns an id source to pass as `createHarness({ ids })`
 * @throws `InvalidOptionsError` for bad options (not an object, an unknown key, `prefixes` not a
 *   plain object, a prefix that is not a non-empty string, at `prefixes.<kind>`)
 * @example
 * ```ts
 * const ids = fakeIds({ prefixes: { tool: 'call_' } })
 * ids('session') // 's1'
 * ids('tool') // 'call_1'
 * ```
 */
export function fakeIds(options: FakeIdsOptions = {}): IdSource {
  throwOptionIssues(fakeIdsIssues(options), options, 'fakeIds options')
  const prefixes = new Map<string, string>(Object.entries(options.prefixes ?? {}))
  const counters = new Map<string, number>()
  return (kind) => {
    const next = (counters.get(kind) ?? 0) + 1
    counters.set(kind, next)
    const prefix = prefixes.get(kind) ?? (kind.charAt(0) || 'x')
    return `${prefix}${next}`
  }
}
