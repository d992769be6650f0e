/**
 * What the conformance tests of the adapters share: vitest as the suite's runner and the
 * line damage of `damageRecord`.
 *
 * @module
 */
import { describe, test } from 'vitest'
import type { ConformanceRunner } from '../../src/testing/run-persistence-conformance.js'

/**
 * vitest as the conformance suite's runner. Our targets provide every hook, so a test the suite
 * would skip fails instead, naming the missing hook: nothing is silently left out.
 */
export const vitestRunner: ConformanceRunner = {
  describe: (name, body) => describe(name, body),
  test: (name, body, timeoutMs) => test(name, body, timeoutMs),
  skip: (name, reason) =>
    test(name, () => {
      throw new Error(`the conformance target must provide every hook: ${reason}`)
    }),
}

/**
 * vitest as the runner of a target that cannot have the `spawnWriter` hook (an in-memory store
 * dies with its process): those tests are skipped, every other missing hook still fails.
 */
export const vitestRunnerWithoutProcesses: ConformanceRunner = {
  ...vitestRunner,
  skip: (name, reason) =>
    reason.includes('spawnWriter') && !reason.includes(' and no ')
      ? test.skip(`${name} (${reason})`, () => undefined)
      : vitestRunner.skip!(name, reason),
}

/**
 * vitest as the runner of a SQL store's target: a SQL store keeps no log bytes, so the cases that
 * need nothing but the `bytes` hook (cutting or rewriting a file's bytes) are skipped; a case
 * missing any other hook fails.
 */
export const vitestRunnerWithoutBytes: ConformanceRunner = {
  ...vitestRunner,
  skip: (name, reason) =>
    reason === 'skipped: the target has no bytes'
      ? test.skip(`${name} (${reason})`, () => undefined)
      : vitestRunner.skip!(name, reason),
}

/**
 * Overwrites the JSONL line holding `seq` (a record, or a chunk-run row covering it) with `x`s of
 * the same length: an unparsable line with valid records after it.
 *
 * @param text - JSONL text
 * @param seq - the seq to damage
 * @param firstRecordLine - the index of the first record line (1 when line 0 is the header)
 * @returns the damaged text, or `undefined` when no line holds `seq`
 */
export function damageLine(text: string, seq: number, firstRecordLine: number): string | undefined {
  const lines = text.split('\n')
  for (let index = firstRecordLine; index < lines.length; index++) {
    const line = lines[index]!
    if (line === '') continue
    const record = JSON.parse(line) as {
      readonly seq?: number
      readonly seq0?: number
      readonly values?: readonly unknown[]
    }
    const first = record.seq ?? record.seq0
    const count = record.values?.length ?? 1
    if (first !== undefined && seq >= first && seq < first + count) {
      lines[index] = 'x'.repeat(line.length)
      return lines.join('\n')
    }
  }
  return undefined
}
