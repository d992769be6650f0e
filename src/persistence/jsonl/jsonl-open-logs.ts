/**
 * The log files a JSONL adapter keeps open for writing: one handle per session whose lease it
 * holds, opened at the first write and kept until the lease ends, the adapter closes or a write
 * fails, so an append is a write and a sync on a handle already open instead of an open, an
 * fstat, a write, a sync and a close.
 *
 * @module
 */
import type { JsonlFileHandle, JsonlFileSystem } from './jsonl-file-system.js'

interface OpenLog {
  readonly path: string
  readonly handle: JsonlFileHandle
}

/**
 * The open log handles of one adapter instance, by session id.
 *
 * @internal
 */
export class JsonlOpenLogs {
  readonly #fileSystem: JsonlFileSystem
  readonly #open = new Map<string, OpenLog>()
  /** Closes not yet done: `closeAll` waits for them, so no handle outlives the adapter. */
  readonly #closing = new Set<Promise<void>>()

  /** @param fileSystem - the file system the handles come from */
  constructor(fileSystem: JsonlFileSystem) {
    this.#fileSystem = fileSystem
  }

  /**
   * The handle of the session's log at `path` (opened `r+` when there is none, or one of another
   * path). Only the session's serialized write step calls it, so two opens never race.
   *
   * @throws the file system's `open` errors (`ENOENT` when the log is gone)
   */
  async handle(sessionId: string, path: string): Promise<JsonlFileHandle> {
    const open = this.#open.get(sessionId)
    if (open !== undefined) {
      if (open.path === path) return open.handle
      this.drop(sessionId)
    }
    const handle = await this.#fileSystem.open(path, 'r+')
    this.#open.set(sessionId, { path, handle })
    return handle
  }

  /**
   * Forgets the session's handle and closes it once `after` settles: a write step already
   * running may still be using it, and the next one opens a fresh handle.
   *
   * @param sessionId - the session id
   * @param after - what must settle before the close (the session's write queue); at once without
   * @returns the close (it never rejects)
   */
  drop(sessionId: string, after?: Promise<unknown>): Promise<void> {
    const open = this.#open.get(sessionId)
    if (open === undefined) return Promise.resolve()
    this.#open.delete(sessionId)
    const closed = (after ?? Promise.resolve())
      .then(
        () => this.#fileSystem.close(open.handle),
        () => this.#fileSystem.close(open.handle),
      )
      .catch(() => undefined)
    this.#closing.add(closed)
    void closed.then(() => this.#closing.delete(closed))
    return closed
  }

  /** The ids with an open handle (for the per-id state tests). */
  ids(): string[] {
    return [...this.#open.keys()]
  }

  /** Closes every handle (adapter close); resolves once all are closed. */
  async closeAll(): Promise<void> {
    for (const sessionId of [...this.#open.keys()]) void this.drop(sessionId)
    await Promise.all([...this.#closing])
  }
}
