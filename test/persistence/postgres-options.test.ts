/**
 * `postgresPersistence` options: each bad one is an `InvalidOptionsError` naming it, thrown by the
 * factory before any connection is opened.
 */
import pg from 'pg'
import { describe, expect, test } from 'vitest'
import { InvalidOptionsError } from '../../src/index.js'
import { postgresPersistence } from '../../src/postgres/index.js'

const url = 'postgresql://app@127.0.0.1:1/app'

describe('postgresPersistence options', () => {
  const cases: readonly [string, unknown, string, RegExp][] = [
    ['no options', undefined, '', /options object/],
    ['neither pool nor connectionString', {}, 'connectionString', /is required \(or give a pool\)/],
    [
      'both pool and connectionString',
      { pool: new pg.Pool({ connectionString: url }), connectionString: url },
      'pool',
      /not both/,
    ],
    ['a pool that is no pool', { pool: { query() {} } }, 'pool', /pg Pool/],
    ['an empty connection string', { connectionString: '' }, 'connectionString', /non-empty string/],
    ['a schema with a quote', { connectionString: url, schema: 'a"b' }, 'schema', /plain identifier/],
    ['a schema starting with a digit', { connectionString: url, schema: '1abc' }, 'schema', /plain identifier/],
    ['a schema of 64 characters', { connectionString: url, schema: 'a'.repeat(64) }, 'schema', /plain identifier/],
    [
      'a lease TTL shorter than the heartbeat',
      { connectionString: url, lease: { ttlMs: 1000, heartbeatMs: 2000 } },
      'lease',
      /must be greater than heartbeatMs/,
    ],
    ['an unknown key', { connectionString: url, dir: '/tmp' }, 'dir', /unknown option/],
  ]
  for (const [name, options, field, message] of cases) {
    test(`${name}: InvalidOptionsError naming ${field === '' ? 'the options' : field}`, () => {
      let caught: unknown
      try {
        postgresPersistence(options as Parameters<typeof postgresPersistence>[0])
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(InvalidOptionsError)
      expect((caught as InvalidOptionsError).field).toBe(field)
      expect((caught as InvalidOptionsError).message).toMatch(message)
    })
  }

  test('good options make an adapter named postgres without connecting', async () => {
    const adapter = postgresPersistence({ connectionString: url, schema: 'Agents_2', lease: { ttlMs: 60_000 } })
    expect(adapter.name).toBe('postgres')
    await adapter.close()
  })
})
