/**
 * Two real processes racing to open one new session id, as two replicas answering the same first
 * request would: the child (a bundled script) takes `{ …, id, startAt }` as its JSON argument,
 * tries at `startAt`, and prints `{ won, owner?, code?, holderOwner? }`.
 *
 * @module
 */
import { expect } from 'vitest'
import type { Bundle } from './child-process.js'

/** What a racing child prints. */
interface RaceResult {
  readonly won: boolean
  readonly owner?: string
  readonly code?: string
  readonly holderOwner?: string
}

/**
 * Runs `rounds` races of two children over fresh ids and asserts each time that exactly one won
 * (with a random owner id) and that the loser's `SessionLockedError` names the winner.
 *
 * @param child - the bundled racing script
 * @param argument - the child's JSON argument besides `id` and `startAt` (where the storage is)
 * @param rounds - how many races
 */
export async function expectOneWinnerPerRace(
  child: Bundle,
  argument: Readonly<Record<string, unknown>>,
  rounds = 3,
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    // Both start at one instant, far enough ahead that both processes are up by then.
    const args = [JSON.stringify({ ...argument, id: `procs-${round}`, startAt: Date.now() + 700 })]
    const outcomes = await Promise.all([
      child.run(args, { cwd: process.cwd() }),
      child.run(args, { cwd: process.cwd() }),
    ])
    const results = outcomes.map((outcome) => {
      expect(outcome.code, outcome.stderr).toBe(0)
      return JSON.parse(outcome.stdout.trim()) as RaceResult
    })
    const winners = results.filter((result) => result.won)
    expect(winners, `round ${round}: ${JSON.stringify(results)}`).toHaveLength(1)
    expect(winners[0]?.owner).toMatch(/^[0-9a-f]{32}$/)
    expect(results.find((result) => !result.won)).toMatchObject({
      code: 'SESSION_LOCKED',
      holderOwner: winners[0]?.owner,
    })
  }
}
