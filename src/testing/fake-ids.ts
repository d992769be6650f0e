import type { IdSource } from '../kernel/host-services.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'

/** Options of {@link fakeIds}. */
export interface FakeIdsOptions {
  /**
   * Prefixes by kind, replacing the kind's first letter (`{ message: 'm' }`).
   *
   * @default the first letter of each kind
   */
  readonly prefixes?: Readonly<Record<string, string>>
}

/**
 * Creates a deterministic id source: per kind, a prefix (the kind's first letter unless
 * overridden) and a counter from 1, so `ids('session')` gives `s1`, then `s2`, and
 * `ids('compaction')` gives `c1`.
 *
 * @param options - prefix overrides
 * @returns an id source to pass as `createHarness({ ids })`
 * @throws `InvalidArgumentError` when a prefix is not a non-empty string
 * @example
 * ```ts
 * const ids = fakeIds({ prefixes: { tool: 'call_' } })
 * ids('session') // 's1'
 * ids('tool') // 'call_1'
 * ```
 */
export function fakeIds(options: FakeIdsOptions = {}): IdSource {
  const prefixes = new Map<string, string>()
  for (const [kind, prefix] of Object.entries(options.prefixes ?? {})) {
    if (typeof prefix !== 'string' || prefix.length === 0) {
      throw new InvalidArgumentError({ argument: `options.prefixes.${kind}`, reason: 'must be a non-empty string', value: prefix })
    }
    prefixes.set(kind, prefix)
  }
  const counters = new Map<string, number>()
  return (kind) => {
    const next = (counters.get(kind) ?? 0) + 1
    counters.set(kind, next)
    const prefix = prefixes.get(kind) ?? (kind.charAt(0) || 'x')
    return `${prefix}${next}`
  }
}
