/**
 * A throwaway PostgreSQL cluster for one test run, started from the PostgreSQL programs installed on
 * this machine: `initdb` into a temp dir, `pg_ctl start` on 127.0.0.1 at a free port (with the
 * Unix socket in the same dir, not in /var/run), one database, trust auth. `.ci/run` does the same
 * in bash; this is for `npm test` on a developer's machine that has PostgreSQL but no server for
 * the tests. initdb and postgres refuse to run as root, so as root the cluster belongs to `nobody`.
 */
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import { chown, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { delimiter, dirname, join } from 'node:path'

/** A running throwaway cluster. */
export interface ThrowawayCluster {
  /** `postgresql://postgres@127.0.0.1:<port>/yoke_test`. */
  readonly connectionString: string
  /** The server's version, as `postgres --version` prints it. */
  readonly version: string
  /** Stops the server at once and removes its directory. */
  stop(): Promise<void>
}

/**
 * Where this machine's PostgreSQL server programs are: Debian keeps them out of PATH, in
 * `/usr/lib/postgresql/<version>/bin` (the newest is taken); elsewhere `initdb` is on PATH.
 *
 * @returns the directory holding `initdb`, `pg_ctl` and `postgres`, or `undefined` when there is none
 */
export function findPostgresBin(): string | undefined {
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+(\.\d+)?$/.test(name) && existsSync(join(debian, name, 'bin', 'initdb')))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
    if (versions[0] !== undefined) return join(debian, versions[0], 'bin')
  }
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const initdb = join(dir, 'initdb')
    // A symlink into the real bin dir is resolved: pg_ctl looks for postgres beside its own real path.
    if (dir !== '' && existsSync(initdb) && existsSync(join(dir, 'pg_ctl'))) return dirname(realpathSync(initdb))
  }
  return undefined
}

/** Who runs the server: `nobody` when we are root, else ourselves (`undefined`). */
function serverUser(): { readonly uid: number; readonly gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('nobody:'))
  const [, , uid, gid] = line?.split(':') ?? []
  if (uid === undefined || gid === undefined)
    throw new Error('running as root, and there is no user nobody to run PostgreSQL as')
  return { uid: Number(uid), gid: Number(gid) }
}

/** Runs a program (as `user` when given) and resolves with its stdout; a failure names its output. */
function run(
  program: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly user: { readonly uid: number; readonly gid: number } | undefined },
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      { cwd: options.cwd, timeout: 60_000, ...(options.user === undefined ? {} : options.user) },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout)
        else reject(new Error(`${program} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`))
      },
    )
  })
}

/** A port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

/**
 * Starts a throwaway cluster with the programs in `bin`.
 *
 * @param bin - from {@link findPostgresBin}
 * @returns the running cluster; stop it when the run ends
 */
export async function startThrowawayCluster(bin: string): Promise<ThrowawayCluster> {
  const user = serverUser()
  // Under /tmp: `nobody` can reach it, and a Unix socket path must stay under ~100 bytes.
  const dir = await mkdtemp(join('/tmp', 'yoke-pg-'))
  const data = join(dir, 'data')
  const socket = join(dir, 'socket')
  const logFile = join(dir, 'postgres.log')
  const options = { cwd: dir, user }
  let started = false
  const stop = async (): Promise<void> => {
    if (started) await run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], options).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await mkdir(socket)
    if (user !== undefined) {
      await chown(dir, user.uid, user.gid)
      await chown(socket, user.uid, user.gid)
    }
    await run(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
      options,
    )
    // The tests kill clients, never this server, and the cluster is gone after the run: without
    // fsync its commits cost no disk flush.
    let port = 0
    for (let attempt = 1; !started; attempt++) {
      port = await freePort()
      const settings = `-k ${socket} -h 127.0.0.1 -p ${port} -c fsync=off -c max_connections=200`
      try {
        await run(join(bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-w', '-t', '60', '-o', settings, 'start'], options)
        started = true
      } catch (error) {
        // Another process may have taken the port between freePort and the bind: try another.
        if (attempt === 3) {
          const serverLog = await readFile(logFile, 'utf8').catch(() => '')
          throw new Error(`${error instanceof Error ? error.message : String(error)}\n${serverLog}`)
        }
      }
    }
    await run(
      join(bin, 'psql'),
      [
        '-X',
        '-q',
        '-v',
        'ON_ERROR_STOP=1',
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        'postgres',
      ].concat(['-c', 'CREATE DATABASE yoke_test']),
      options,
    )
    const version = (await run(join(bin, 'postgres'), ['--version'], options)).trim()
    return { connectionString: `postgresql://postgres@127.0.0.1:${port}/yoke_test`, version, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
