/**
 * A real PostgreSQL database for the tests: every caller gets a schema of its own on one shared
 * server, so test files run in parallel without seeing each other's tables.
 *
 * The server is, in order: the one `YOKE_TEST_POSTGRES_URL` names (`.ci/run` sets it to the
 * throwaway cluster it started); else a throwaway cluster the global setup
 * (`postgres-global-setup.ts`) starts from the PostgreSQL programs installed on this machine. With
 * neither, a test that asks for a database fails with a message saying how to get one: under CI
 * always, and on a developer's machine too unless `YOKE_TEST_POSTGRES=skip` is set, which skips
 * those tests instead (and is ignored when `CI` is set). Nothing is mocked.
 */
import { randomBytes } from 'node:crypto'
import { Client } from 'pg'
import { inject } from 'vitest'

/** What the global setup hands to the test files about the server. */
export type PostgresProvision =
  /** A server to use. */
  | { readonly kind: 'server'; readonly connectionString: string; readonly source: string }
  /** No server: the message a test that needs one fails with. */
  | { readonly kind: 'missing'; readonly problem: string }
  /** The developer chose to skip the Postgres tests. */
  | { readonly kind: 'skipped' }

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL server for the tests (see test/helpers/postgres.ts). */
    yokePostgres: PostgresProvision
  }
}

/** How to get a server, for the failure message. */
export const howToRunPostgresTests = [
  'To run the PostgreSQL tests, do one of:',
  '  - install PostgreSQL (Debian/Ubuntu: apt-get install postgresql); the tests then start a throwaway server',
  '    of their own from its programs (initdb, pg_ctl) and remove it afterwards;',
  '  - set YOKE_TEST_POSTGRES_URL=postgresql://user:password@host:port/database, a database the user may create schemas in;',
  '  - run .ci/run, which installs PostgreSQL when it is missing and runs the whole suite against a throwaway server.',
  'To skip these tests on this machine instead, set YOKE_TEST_POSTGRES=skip (ignored when CI is set).',
  'See docs/contributing.md.',
].join('\n')

/** The provision, or a "missing" one when the global setup did not run (another config). */
function provision(): PostgresProvision {
  return (
    inject('yokePostgres') ?? {
      kind: 'missing',
      problem: 'the PostgreSQL global setup did not run (is vitest.config.ts in use?)',
    }
  )
}

/**
 * Whether the Postgres tests are skipped on this machine (`YOKE_TEST_POSTGRES=skip`, not under CI):
 * use as `describe.skipIf(skipPostgres)`.
 */
export const skipPostgres: boolean = provision().kind === 'skipped'

/**
 * The connection string of the test database.
 *
 * @returns the connection string
 * @throws Error naming why there is no server and how to get one
 */
export function postgresConnectionString(): string {
  const given = provision()
  if (given.kind === 'server') return given.connectionString
  if (given.kind === 'skipped') throw new Error('the PostgreSQL tests are skipped (YOKE_TEST_POSTGRES=skip)')
  throw new Error(`No PostgreSQL server for the tests: ${given.problem}\n\n${howToRunPostgresTests}`)
}

/** A schema of its own on the test database, for one test or one test file. */
export interface TestSchema {
  /** The connection string of the test database (the schema is not in it: name it, or set `search_path`). */
  readonly connectionString: string
  /** The schema's name: lower-case letters, digits and `_`, so it needs no quoting. */
  readonly schema: string
  /** Drops the schema and everything in it. */
  drop(): Promise<void>
  /** The same as {@link TestSchema.drop}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * Creates an empty schema with a unique name on the test database.
 *
 * @param label - a word for the name, so a leftover schema says which test made it
 * @returns the schema; drop it when the test ends
 * @throws Error when there is no server (see {@link postgresConnectionString})
 */
export async function createTestSchema(label: string): Promise<TestSchema> {
  const connectionString = postgresConnectionString()
  const word = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 40)
  const schema = `yoke_${word}_${randomBytes(6).toString('hex')}`
  try {
    await withClient(connectionString, (client) => client.query(`CREATE SCHEMA ${schema}`))
  } catch (error) {
    const given = provision()
    const source = given.kind === 'server' ? given.source : 'the test setup'
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(
      `Could not create a schema on the PostgreSQL server ${redacted(connectionString)} (from ${source}): ${reason}\n\n${howToRunPostgresTests}`,
      { cause: error },
    )
  }
  const drop = async (): Promise<void> => {
    await withClient(connectionString, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))
  }
  return { connectionString, schema, drop, [Symbol.asyncDispose]: drop }
}

/** The connection string without its password, for messages. */
function redacted(connectionString: string): string {
  try {
    const url = new URL(connectionString)
    if (url.password !== '') url.password = '***'
    return url.toString()
  } catch {
    return '(a connection string that is not a URL)'
  }
}

/** Runs `body` on a fresh connection, closed afterwards whatever happens. */
async function withClient<T>(connectionString: string, body: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}
