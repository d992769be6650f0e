import type { ChildProcess } from 'node:child_process'
import type { LockHolder } from '../../errors/lock-holder.js'
import type { PersistenceAdapter } from '../../persistence/persistence-adapter.js'

/** Raw access to the stored bytes of one session's log, for the torn-tail and damaged-header tests. */
export interface ConformanceBytes {
  /**
   * Reads the whole stored log of a session as the adapter keeps it (file bytes, frames included).
   *
   * @param sessionId - the session id
   * @returns a copy of the bytes
   */
  read(sessionId: string): Uint8Array | Promise<Uint8Array>
  /**
   * Replaces the stored log of a session with `bytes` (creating it when absent), as a crash or a
   * foreign writer would leave it.
   *
   * @param sessionId - the session id
   * @param bytes - the new content
   */
  write(sessionId: string, bytes: Uint8Array): void | Promise<void>
}

/**
 * What `runPersistenceConformance` tests: an adapter over fresh, empty storage, a way to open a
 * second instance over the same storage, and optional storage hooks. A test whose hook is
 * missing is registered as skipped, naming the hook.
 */
export interface ConformanceTarget {
  /** The adapter under test, over empty storage. The suite closes it after the test. */
  readonly adapter: PersistenceAdapter
  /**
   * Opens another instance over the same storage (another process, or the same one after a
   * restart). The suite closes it after the test.
   *
   * @returns the second instance
   */
  reopen(): PersistenceAdapter | Promise<PersistenceAdapter>
  /** Raw access to a log's bytes; without it the torn-tail and damaged-header tests are skipped. */
  readonly bytes?: ConformanceBytes
  /**
   * Damages the stored record holding `seq` so that it fails the integrity checks while the
   * records after it stay valid (e.g. overwrite its line with garbage of the same length).
   * Without it the corruption tests are skipped.
   *
   * @param sessionId - the session id
   * @param seq - a seq of a committed event with committed events after it
   */
  damageRecord?(sessionId: string, seq: number): void | Promise<void>
  /**
   * Makes the current lease of a session lapse behind the holder's back (delete its lock file,
   * let its TTL pass), so another instance may acquire it. Without it the fencing test is skipped.
   *
   * @param sessionId - the session id
   */
  expireLease?(sessionId: string): void | Promise<void>
  /**
   * Makes the current lease of a session expire behind its holder's back, as if the holder had
   * been frozen past its TTL: its last heartbeat becomes older than the TTL (rewrite the lock
   * file's or the lease row's heartbeat), while the holder itself is told nothing. Without it the
   * takeover tests are skipped.
   *
   * @param sessionId - the session id
   */
  ageLease?(sessionId: string): void | Promise<void>
  /**
   * Writes a lease record for a session as an earlier process would have left it (a container
   * restarted as PID 1 finds the lock its previous run wrote): a lock file with these fields and a
   * random token, or a lease row. Nobody in this process holds it; whether it is live is decided
   * by its `heartbeatAt` and `ttlMs` alone. Without it the pid-reuse tests are skipped.
   *
   * @param sessionId - the session id (it holds no lease when the hook is called)
   * @param holder - the holder to record: owner, epoch, pid, host, acquiredAt, heartbeatAt, ttlMs
   */
  plantLease?(sessionId: string, holder: LockHolder): void | Promise<void>
  /**
   * Starts a child process over the same storage that runs `serveConformanceWriter` from
   * `yoke/testing` with an adapter factory for it, with stdin and stdout as pipes (stderr may be
   * inherited). The suite speaks the writer protocol over them, freezes the child (SIGSTOP,
   * SIGCONT) and kills it (SIGKILL), then checks the storage through `reopen`. Without it the
   * frozen-writer and crash tests are skipped (an in-memory store cannot have it: its storage dies
   * with its process).
   *
   * @returns the child process, e.g. `spawn(process.execPath, ['writer.js', dir], { stdio: ['pipe', 'pipe', 'inherit'] })`
   */
  spawnWriter?(): ChildProcess | Promise<ChildProcess>
  /** Removes the storage after the test (temp directories, tables). */
  cleanup?(): void | Promise<void>
}

/**
 * The test runner `runPersistenceConformance` registers with. Any runner fits (vitest, jest,
 * mocha, `node:test`); `yoke/testing` imports none of them.
 */
export interface ConformanceRunner {
  /**
   * Opens a group of tests. `body` returns a promise when `makeTarget` does: the suite makes one
   * target while registering, to see which hooks exist, so a runner used with an async
   * `makeTarget` must await an async `body` (vitest and `node:test` do).
   *
   * @param name - the group name
   * @param body - registers the tests
   */
  describe(name: string, body: () => void | Promise<void>): void
  /**
   * Registers one test.
   *
   * @param name - the test name, a behavior sentence
   * @param body - the test; it rejects with an `AssertionError` (or the adapter's error) on failure
   * @param timeoutMs - a timeout for the slow tests (large batch, every-offset cut); `undefined` keeps the runner's default
   */
  test(name: string, body: () => Promise<void>, timeoutMs?: number): void
  /**
   * Registers a skipped test. When absent, a skipped test is registered as a passing test whose
   * name says it was skipped and why.
   *
   * @param name - the test name
   * @param reason - which hook the target lacks
   */
  skip?(name: string, reason: string): void
}
