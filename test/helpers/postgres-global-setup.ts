/**
 * Vitest global setup: decides once per run which PostgreSQL server the tests use (see
 * `postgres.ts`) and hands it to every test file. When `YOKE_TEST_POSTGRES_URL` is not set and
 * PostgreSQL is installed here, it starts a throwaway cluster for the run and removes it at the end.
 */
import type { TestProject } from 'vitest/node'
import { findPostgresBin, startThrowawayCluster, type ThrowawayCluster } from './postgres-cluster.js'
import type { PostgresProvision } from './postgres.js'

/** Whether this is a CI run: `CI` set to anything but an empty string, `0` or `false`. */
function underCi(): boolean {
  const value = process.env['CI']
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}

/**
 * Chooses the server and provides it to the test files as `yokePostgres`.
 *
 * @param project - the vitest project
 * @returns the teardown, which stops a cluster started here
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { provision, cluster } = await choose()
  project.provide('yokePostgres', provision)
  return async () => {
    await cluster?.stop()
  }
}

/** The server for this run, and the cluster to stop afterwards when one was started here. */
async function choose(): Promise<{ readonly provision: PostgresProvision; readonly cluster?: ThrowawayCluster }> {
  const url = process.env['YOKE_TEST_POSTGRES_URL']
  if (url !== undefined && url !== '')
    return { provision: { kind: 'server', connectionString: url, source: 'YOKE_TEST_POSTGRES_URL' } }
  // Never a skip in CI: there a missing server is a failure, whatever was asked.
  if (process.env['YOKE_TEST_POSTGRES'] === 'skip' && !underCi()) return { provision: { kind: 'skipped' } }
  const bin = findPostgresBin()
  if (bin === undefined)
    return {
      provision: {
        kind: 'missing',
        problem: 'YOKE_TEST_POSTGRES_URL is not set and no PostgreSQL programs (initdb, pg_ctl) were found',
      },
    }
  try {
    const cluster = await startThrowawayCluster(bin)
    const source = `a throwaway cluster of ${cluster.version}`
    return { provision: { kind: 'server', connectionString: cluster.connectionString, source }, cluster }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return { provision: { kind: 'missing', problem: `starting a throwaway cluster with ${bin} failed: ${reason}` } }
  }
}
