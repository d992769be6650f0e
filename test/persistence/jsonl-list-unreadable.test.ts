import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'fflate'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createHarness } from '../../src/harness/create-harness.js'
import type { Harness } from '../../src/harness/harness.js'
import { PersistenceCorruptionError } from '../../src/errors/persistence-corruption-error.js'
import { SessionFormatUnsupportedError } from '../../src/errors/session-format-unsupported-error.js'
import { type JsonlPersistence, jsonlPersistence } from '../../src/persistence/jsonl/jsonl-persistence.js'
import type { SessionHeader } from '../../src/session/session-header.js'
import { scriptedModel } from '../../src/testing/scripted-model.js'
import { expectError } from '../session/session-helpers.js'
import { L1, logOf } from '../session/builders.js'

const H1: SessionHeader = { version: 1, id: 's1', createdAt: 1000, cwd: '/w' }

let dir: string
let opened: JsonlPersistence[] = []
let harness: Harness | undefined

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-list-'))
  opened = []
  harness = undefined
})

afterEach(async () => {
  await harness?.close()
  for (const adapter of opened) await adapter.close()
  await rm(dir, { recursive: true, force: true })
})

function J(): JsonlPersistence {
  const adapter = jsonlPersistence({ dir })
  opened.push(adapter)
  return adapter
}

async function storeOne(): Promise<void> {
  const adapter = J()
  await adapter.create(H1)
  const lease = await adapter.acquire('s1')
  await adapter.append('s1', logOf(L1()), { expectedSeq: 0, lease })
  await lease.release()
}

const newer = `${JSON.stringify({ type: 'session', version: 99, id: 'future', createdAt: 5 })}\n`

describe('jsonlPersistence list: logs it cannot read are reported', () => {
  it('a log from a newer Yoke (plain or gzip) is in unreadable with FORMAT_TOO_NEW, naming the file and versions', async () => {
    await storeOne()
    await writeFile(join(dir, 'future.jsonl'), newer)
    await writeFile(join(dir, 'later.jsonl.gz'), gzipSync(new TextEncoder().encode(newer.replace('future', 'later'))))
    await writeFile(join(dir, 'broken.jsonl'), '{"type":"session","version":1\n')
    const listing = await J().list()
    expect(listing.headers).toEqual([H1])
    expect(listing.damaged).toHaveLength(1)
    expectError(listing.damaged[0], PersistenceCorruptionError, 'CORRUPT_HEADER', {
      location: join(dir, 'broken.jsonl'),
    })
    expect(listing.unreadable).toHaveLength(2)
    expectError(listing.unreadable?.[0], SessionFormatUnsupportedError, 'FORMAT_TOO_NEW', {
      sessionId: 'future',
      storedVersion: 99,
      supportedVersion: 1,
      direction: 'newer',
      location: join(dir, 'future.jsonl'),
    })
    expectError(listing.unreadable?.[1], SessionFormatUnsupportedError, 'FORMAT_TOO_NEW', {
      sessionId: 'later',
      location: join(dir, 'later.jsonl.gz'),
    })
  })

  it('a listing with nothing unreadable has no unreadable entry', async () => {
    await storeOne()
    expect(await J().list()).toEqual({ headers: [H1], damaged: [] })
  })

  it('harness.listSessions lists the readable sessions and warns once per log it cannot read', async () => {
    await storeOne()
    await writeFile(join(dir, 'future.jsonl'), newer)
    await writeFile(join(dir, 'broken.jsonl'), 'not json\n')
    const warnings: { message: string; error: unknown }[] = []
    harness = await createHarness({
      model: scriptedModel([]),
      persistence: J(),
      logger: {
        debug() {},
        info() {},
        warn: (message, fields) =>
          warnings.push({ message, error: (fields as { error?: unknown } | undefined)?.error }),
        error() {},
      },
    })
    const sessions = await harness.listSessions()
    expect(sessions.map((session) => session.id)).toEqual(['s1'])
    expect(warnings.map((warning) => warning.message)).toEqual([
      'a stored session header is damaged',
      'a stored session is in a log format this Yoke cannot read',
    ])
    expectError(warnings[1]?.error, SessionFormatUnsupportedError, 'FORMAT_TOO_NEW', { sessionId: 'future' })
  })
})
