import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { createHarness, type Harness } from 'yoke'
import { fakeIds, scriptedModel } from 'yoke/testing'
import { ErrorCode } from '../../src/errors/codes.js'
import { PersistenceError } from '../../src/errors/persistence-error.js'
import { freshSessionId, isStored } from '../../src/persistence/fresh-session-id.js'
import type { PersistenceCoordinator } from '../../src/persistence/persistence-coordinator.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { recordingLogger } from '../helpers/recording-logger.js'

/** A coordinator whose `readFrom` knows only `stored`, and fails for `broken`. */
function storage(stored: ReadonlySet<string>, broken = new Set<string>()): PersistenceCoordinator {
  return {
    readFrom: async (id: string) => {
      if (broken.has(id))
        throw new PersistenceError({ code: ErrorCode.WRITE_FAILED, sessionId: id, detail: 'disk gone' })
      if (!stored.has(id))
        throw new PersistenceError({ code: ErrorCode.SESSION_NOT_FOUND, sessionId: id, detail: 'none' })
      return { header: { version: 1, id, createdAt: 0 }, events: [] }
    },
  } as unknown as PersistenceCoordinator
}

function counter(): () => string {
  let next = 0
  return () => `s${++next}`
}

describe('isStored and freshSessionId', () => {
  test('isStored: a resolved read is stored, SESSION_NOT_FOUND is not, other failures propagate', async () => {
    const persistence = storage(new Set(['a']), new Set(['bad']))
    expect([
      await isStored(persistence, 'a'),
      await isStored(persistence, 'b'),
      await isStored(undefined, 'a'),
    ]).toEqual([true, false, false])
    expect(await rejectionOf(isStored(persistence, 'bad'))).toMatchObject({ code: 'WRITE_FAILED', sessionId: 'bad' })
  })

  test('skips live and stored draws and returns the first free one', async () => {
    const live = new Set(['s2'])
    const id = await freshSessionId(
      counter(),
      (candidate) => live.has(candidate),
      storage(new Set(['s1', 's3'])),
      () => new Error('taken'),
    )
    expect(id).toBe('s4')
  })

  test('gives up after 100 taken draws with the caller error for the last one', async () => {
    const seen: [string, boolean][] = []
    const always = (): string => 'same'
    const error = await rejectionOf(
      freshSessionId(
        always,
        () => false,
        storage(new Set(['same'])),
        (id, stored) => {
          seen.push([id, stored])
          return new Error(`${id} taken`)
        },
      ),
    )
    expect(error).toEqual(new Error('same taken'))
    expect(seen).toEqual([['same', true]])
    const live = await rejectionOf(
      freshSessionId(
        always,
        () => true,
        undefined,
        (id, stored) => new Error(`${id} ${stored ? 'stored' : 'live'}`),
      ),
    )
    expect(live).toEqual(new Error('same live'))
  })

  test('a read failure stops the search', async () => {
    const error = await rejectionOf(
      freshSessionId(
        counter(),
        () => false,
        storage(new Set(), new Set(['s1'])),
        () => new Error('taken'),
      ),
    )
    expect(error).toMatchObject({ code: 'WRITE_FAILED' })
  })
})

describe('a damaged or too-new stored log takes its id', () => {
  async function harnessOver(content: string): Promise<{ harness: Harness; dir: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'yoke-taken-'))
    await writeFile(join(dir, 's1.jsonl'), content)
    const harness = await createHarness({
      persistence: { dir },
      ids: fakeIds(),
      model: scriptedModel([]),
      logger: recordingLogger(),
    })
    return { harness, dir }
  }
  const tooNew = `${JSON.stringify({ type: 'session', version: 99, id: 's1', createdAt: 0 })}\n`
  const corrupt = `${JSON.stringify({ type: 'session', version: 1, id: 's1', createdAt: 0 })}\nxx\n${JSON.stringify({ type: 'turn/start', seq: 1, time: 0, data: { turn: 1 } })}\n`

  test.each([
    ['too new', tooNew],
    ['corrupt', corrupt],
  ])(
    '%s: a given id is SESSION_EXISTS, a generated one is skipped, in createAgent and fork',
    async (_kind, content) => {
      const { harness, dir } = await harnessOver(content)
      try {
        expect(await rejectionOf(harness.createAgent({ sessionId: 's1' }))).toMatchObject({
          name: 'PersistenceError',
          code: 'SESSION_EXISTS',
        })
        const agent = await harness.createAgent()
        expect(agent.id).toBe('s2')
        expect(await rejectionOf(harness.fork('s2', { id: 's1' }))).toMatchObject({
          name: 'SessionForkError',
          code: 'SESSION_EXISTS',
        })
        const child = await harness.fork('s2')
        expect(child.id).not.toBe('s1')
      } finally {
        await harness.close()
        await rm(dir, { recursive: true, force: true })
      }
    },
  )
})

describe('persistence operation options', () => {
  test('a non-object options, a non-signal signal or a non-boolean truncateAtCorruption is InvalidArgumentError', async () => {
    const harness = await createHarness({ model: scriptedModel([]), logger: recordingLogger() })
    try {
      const persistence = harness.persistence
      const calls = [
        (options: unknown) => persistence.load('s1', options as never),
        (options: unknown) => persistence.inspect('s1', options as never),
        (options: unknown) => persistence.prepare('s1', options as never),
        (options: unknown) => persistence.readFrom('s1', 0, options as never),
        (options: unknown) => persistence.list(options as never),
        (options: unknown) => persistence.delete('s1', options as never),
        (options: unknown) => persistence.repair('s1', options as never),
      ]
      for (const call of calls) {
        for (const options of [null, 42, [], { signal: 42 }]) {
          expect(await rejectionOf(call(options))).toMatchObject({ code: 'INVALID_ARGUMENT' })
        }
      }
      expect(await rejectionOf(persistence.repair('s1', { truncateAtCorruption: 'yes' } as never))).toMatchObject({
        argument: 'options.truncateAtCorruption',
      })
    } finally {
      await harness.close()
    }
  })
})
