/**
 * `examples/fork.ts`: two turns, a fork after turn 1, both
 * branches continued. Both final answers are printed and the fork leaves the parent's log as it
 * was: the parent's file only ever grows by its own turns, and the child's starts with a copy.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { jsonlPersistence, type SessionEvent } from 'yoke'
import { bundleExample, type ExampleBundle } from './example-process.js'

let example: ExampleBundle | undefined
let dir = ''

beforeAll(async () => {
  example = await bundleExample('fork')
  dir = await mkdtemp(join(tmpdir(), 'yoke-example-fork-'))
}, 30_000)

afterAll(async () => {
  await example?.remove()
  await rm(dir, { recursive: true, force: true })
})

function userTexts(events: readonly SessionEvent[]): string[] {
  return events.flatMap((event) => {
    if (event.type !== 'user/message') return []
    const content = (event.data as { readonly content: readonly { readonly type: string; readonly text?: string }[] })
      .content
    return content.flatMap((block) => (block.type === 'text' && block.text !== undefined ? [block.text] : []))
  })
}

test('both branches answer, the child is a copy of turn 1 with lineage, and the parent is unchanged by the fork', async () => {
  const outcome = await example!.run(['--dir', dir])
  expect(outcome.stderr).toBe('')
  expect(outcome.code).toBe(0)
  expect(outcome.stdout.trimEnd().split('\n')).toEqual([
    'trip turn 1 completed: Day 1: the Louvre. Day 2: Montmartre.',
    'trip turn 2 completed: Cheaper: picnic lunches and the free first-Sunday museums.',
    'forked trip at seq 13 into trip-rainy: 15 events, parent trip',
    'parent log unchanged by the fork: true',
    'trip-rainy turn 2 completed: Rainy version: the Musée d’Orsay, then the covered passages.',
    'trip turn 3 completed: Packing: an umbrella and good shoes.',
  ])

  const adapter = jsonlPersistence({ dir })
  try {
    const parent = await adapter.load('trip')
    const child = await adapter.load('trip-rainy')
    expect(child.header).toMatchObject({ id: 'trip-rainy', parentSession: 'trip', seedLength: 14 })
    expect(parent.header.parentSession).toBeUndefined()
    // The seed is an exact copy of the parent's events 0…13 (turn 1, up to its turn/end).
    expect(JSON.stringify(child.events.slice(0, 14))).toBe(JSON.stringify(parent.events.slice(0, 14)))
    expect(parent.events[13]).toMatchObject({ type: 'turn/end', data: { turn: 1 } })
    // Each branch has only its own later turns.
    expect(userTexts(parent.events)).toEqual(['Plan two days in Paris.', 'Make it cheaper.', 'What should I pack?'])
    expect(userTexts(child.events)).toEqual(['Plan two days in Paris.', 'What if it rains?'])
    const turnsOf = (events: readonly SessionEvent[]) =>
      events.filter((event) => event.type === 'turn/end').map((event) => (event.data as { turn: number }).turn)
    expect(turnsOf(parent.events)).toEqual([1, 2, 3])
    expect(turnsOf(child.events)).toEqual([1, 2])
    expect(parent.torn).toBeUndefined()
    expect(child.torn).toBeUndefined()
  } finally {
    await adapter.close()
  }
}, 20_000)
