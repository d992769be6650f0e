/**
 * better-sqlite3 works in this install (its native module built for this Node): a real database
 * file in WAL mode with `synchronous=FULL`, written in a transaction, closed, and read back by a
 * new connection.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, expect, test } from 'vitest'

let dir = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-sqlite-smoke-'))
})

afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true })
})

test('a file database in WAL with synchronous=FULL keeps a committed transaction and drops a failed one', () => {
  const path = join(dir, 'sessions.db')
  const writer = new Database(path)
  expect(writer.pragma('journal_mode = WAL', { simple: true })).toBe('wal')
  writer.pragma('synchronous = FULL')
  // 2 is FULL.
  expect(writer.pragma('synchronous', { simple: true })).toBe(2)
  writer.exec(
    'CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session, seq))',
  )
  const insert = writer.prepare('INSERT INTO events (session, seq, body) VALUES (?, ?, ?)')
  const append = writer.transaction((session: string, seqs: readonly number[]) => {
    for (const seq of seqs) insert.run(session, seq, JSON.stringify({ seq }))
  })
  append('s-é🙂', [1, 2, 3])
  // The second row collides with seq 3: the whole batch rolls back, seq 4 included.
  expect(() => append('s-é🙂', [4, 3])).toThrow(/UNIQUE constraint failed/)
  expect(existsSync(`${path}-wal`)).toBe(true)
  writer.close()

  const reader = new Database(path, { readonly: true, fileMustExist: true })
  try {
    expect(reader.pragma('journal_mode', { simple: true })).toBe('wal')
    const rows = reader.prepare('SELECT session, seq, body FROM events ORDER BY seq').all()
    expect(rows).toEqual([1, 2, 3].map((seq) => ({ session: 's-é🙂', seq, body: JSON.stringify({ seq }) })))
  } finally {
    reader.close()
  }
})
