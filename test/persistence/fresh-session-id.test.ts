import { describe, expect, test } from 'vitest'
import { ErrorCode } from '../../src/errors/codes.js'
import { PersistenceError } from '../../src/errors/persistence-error.js'
import { freshSessionId, isStored } from '../../src/persistence/fresh-session-id.js'
import type { PersistenceCoordinator } from '../../src/persistence/persistence-coordinator.js'
import { rejectionOf } from '../helpers/outcomes.js'

/** A coordinator whose `readFrom` knows only `stored`, and fails for `broken`. */
function storage(stored: ReadonlySet<string>, broken = new Set<string>()): PersistenceCoordinator {
  return {
    readFrom: async (id: string) => {
      if (broken.has(id)) throw new PersistenceError({ code: ErrorCode.WRITE_FAILED, sessionId: id, detail: 'disk gone' })
      if (!stored.has(id)) throw new PersistenceError({ code: ErrorCode.SESSION_NOT_FOUND, sessionId: id, detail: 'none' })
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
    expect([await isStored(persistence, 'a'), await isStored(persistence, 'b'), await isStored(undefined, 'a')]).toEqual([true, false, false])
    expect(await rejectionOf(isStored(persistence, 'bad'))).toMatchObject({ code: 'WRITE_FAILED', sessionId: 'bad' })
  })

  test('skips live and stored draws and returns the first free one', async () => {
    const live = new Set(['s2'])
    const id = await freshSessionId(counter(), (candidate) => live.has(candidate), storage(new Set(['s1', 's3'])), () => new Error('taken'))
    expect(id).toBe('s4')
  })

  test('gives up after 100 taken draws with the caller error for the last one', async () => {
    const seen: [string, boolean][] = []
    const always = (): string => 'same'
    const error = await rejectionOf(
      freshSessionId(always, () => false, storage(new Set(['same'])), (id, stored) => {
        seen.push([id, stored])
        return new Error(`${id} taken`)
      }),
    )
    expect(error).toEqual(new Error('same taken'))
    expect(seen).toEqual([['same', true]])
    const live = await rejectionOf(freshSessionId(always, () => true, undefined, (id, stored) => new Error(`${id} ${stored ? 'stored' : 'live'}`)))
    expect(live).toEqual(new Error('same live'))
  })

  test('a read failure stops the search', async () => {
    const error = await rejectionOf(freshSessionId(counter(), () => false, storage(new Set(), new Set(['s1'])), () => new Error('taken')))
    expect(error).toMatchObject({ code: 'WRITE_FAILED' })
  })
})
