/**
 * Session ids with `@`, `:`, `+` and inner dots (e-mail addresses, `tenant:user` keys): valid
 * everywhere, stored under injective file names that are safe on Linux, macOS and Windows, and
 * mapped back by listing; old ids keep their old file names.
 *
 * @module
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, isSessionId, jsonlPersistence } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { fileNameOf, sessionIdOfFileName } from '../../src/persistence/session-file-name.js'
import { createSession } from '../../src/session/create-session.js'

const newIds = [
  'alice@example.com',
  'tenant:user',
  'a.b',
  'a..b',
  'x..',
  'alice+tag@example.com',
  'acme:eu:42',
  ':',
  '@',
]

describe('which ids are valid', () => {
  test.each(newIds)('%j is a session id, for the registry and createSession', (id) => {
    expect(isSessionId(id)).toBe(true)
    expect(createSession({ id }).id).toBe(id)
  })

  test.each(['.hidden', '..', '.', 'a/b', 'a\\b', 'a b', 'a~b', 'a=b', 'a%3Ab', 'a*b', 'a?b', 'a"b', 'a|b', '', 'é'])(
    '%j is still not a session id',
    (id) => {
      expect(isSessionId(id)).toBe(false)
      expect(() => createSession({ id })).toThrow(expect.objectContaining({ code: 'INVALID_SESSION_ID' }))
    },
  )

  test('the refusal names the rule', () => {
    expect(() => createSession({ id: 'a/b' })).toThrow(/\[A-Za-z0-9_\.@:\+-\]/)
  })
})

describe('file names', () => {
  test.each([
    ['alice@example.com', 'alice@example.com'],
    ['tenant:user', 'tenant=user'],
    ['acme:eu:42', 'acme=eu=42'],
    ['a..b', 'a..b'],
    ['con:1', 'con=1'],
    ['nul.x:y', '~nul.x=y'],
    ['s1', 's1'],
    ['Run.2', 'Run.2'],
    ['con', '~con'],
  ])('%s → %s and back', (id, name) => {
    expect(fileNameOf(id)).toBe(name)
    expect(sessionIdOfFileName(name)).toBe(id)
  })

  test.each(['a:b', '~a=b', '~con=', 'a b', '.x', '..', '.', 'a/b', 'a\\b', '~~con', '=', ''])(
    '%j maps back to no id (fileNameOf never writes it)',
    (name) => {
      if (name === '=') expect(sessionIdOfFileName(name)).toBe(':')
      else expect(sessionIdOfFileName(name)).toBeUndefined()
    },
  )

  test('names hold only characters safe on Linux, macOS and Windows, never start with "." and keep the id length', () => {
    const alphabet = 'abAB09_.@:+-'
    let seed = 7
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    const names = new Map<string, string>()
    for (let index = 0; index < 5000; index++) {
      const length = 1 + Math.floor(random() * 6)
      let id = ''
      for (let at = 0; at < length; at++) id += alphabet[Math.floor(random() * alphabet.length)]
      if (!isSessionId(id)) continue
      const name = fileNameOf(id)
      expect(name).toMatch(/^~?[A-Za-z0-9_.@=+-]+$/)
      expect(name.startsWith('.')).toBe(false)
      expect(name.length).toBeLessThanOrEqual(id.length + 1)
      expect(sessionIdOfFileName(name)).toBe(id)
      // Injective: no two ids share a name (case-sensitively, as before).
      const other = names.get(name)
      if (other !== undefined) expect(other).toBe(id)
      names.set(name, id)
    }
    expect(fileNameOf(':'.repeat(128))).toHaveLength(128)
  })
})

describe('through JSONL: create, list, open, fork', () => {
  let dir: string
  const harnesses: Harness[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'yoke-ids-'))
  })

  afterEach(async () => {
    for (const harness of harnesses.splice(0)) await harness.close()
    await rm(dir, { recursive: true, force: true })
  })

  async function open(replies: readonly string[]): Promise<Harness> {
    const harness = await createHarness({
      persistence: jsonlPersistence({ dir }),
      model: scriptedModel(replies.map((reply) => text(reply))),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    harnesses.push(harness)
    return harness
  }

  test('ids with @, : and dots are stored, listed, resumed and forked; the files have the safe names', async () => {
    const ids = ['alice@example.com', 'tenant:user', 'a..b', 'con:1']
    const first = await open(ids.map((id) => `hello ${id}`))
    for (const id of ids) {
      const agent = await first.createAgent({ sessionId: id })
      expect(agent.id).toBe(id)
      expect(await agent.run('hi')).toMatchObject({ turn: 1, text: `hello ${id}` })
    }
    await first.close()
    expect((await readdir(dir)).filter((name) => name.endsWith('.jsonl')).sort()).toEqual([
      'a..b.jsonl',
      'alice@example.com.jsonl',
      'con=1.jsonl',
      'tenant=user.jsonl',
    ])

    const second = await open(['again', 'branch'])
    expect((await second.listSessions()).map((entry) => entry.id).sort()).toEqual([...ids].sort())
    const resumed = await second.resumeAgent('tenant:user')
    expect(await resumed.run('more')).toMatchObject({ turn: 2, text: 'again' })
    const child = await second.fork('alice@example.com', { id: 'alice@example.com:branch' })
    expect(child.header).toMatchObject({ parentSession: 'alice@example.com' })
    const forked = await second.resumeAgent('alice@example.com:branch')
    expect(await forked.run('go on')).toMatchObject({ turn: 2, text: 'branch' })
    await second.close()
    expect(await readdir(dir)).toContain('alice@example.com=branch.jsonl')
    const third = await open([])
    expect((await third.listSessions()).map((entry) => entry.id)).toContain('alice@example.com:branch')
  })

  test('two ids that differ only where a character is mapped never share a file', async () => {
    const harness = await open(['one', 'two'])
    const colon = await harness.createAgent({ sessionId: 'x:y' })
    await colon.run('a')
    const plain = await harness.createAgent({ sessionId: 'xy' })
    await plain.run('b')
    await harness.close()
    expect((await readdir(dir)).filter((name) => name.endsWith('.jsonl')).sort()).toEqual(['x=y.jsonl', 'xy.jsonl'])
  })
})

describe('through memory persistence', () => {
  test('an e-mail id and a tenant:user id are created, listed and resumed', async () => {
    const harness = await createHarness({
      model: scriptedModel([text('one'), text('two'), text('three')]),
      clock: fakeClock(),
      ids: fakeIds(),
    })
    try {
      for (const id of ['bob@example.org', 'acme:bob']) await (await harness.createAgent({ sessionId: id })).run('hi')
      expect((await harness.listSessions()).map((entry) => entry.id).sort()).toEqual(['acme:bob', 'bob@example.org'])
      const agent = await harness.openAgent('acme:bob')
      expect(await agent.run('more')).toMatchObject({ turn: 2, text: 'three' })
    } finally {
      await harness.close()
    }
  })
})
