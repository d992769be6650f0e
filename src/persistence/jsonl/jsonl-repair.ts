/**
 * The crash-safe tail rewrites of the JSONL adapter: cut and append, rewrite through a temp file
 * and `rename`, or quarantine the damaged original first.
 *
 * @module
 */
import { basename, join } from 'node:path'
import type { SessionEvent } from '../../session/session-event.js'
import type { SessionHeader } from '../../session/session-header.js'
import { encodeBatch, encodeHeaderLine } from './jsonl-codec.js'
import type { JsonlFileHandle, JsonlFileSystem } from './jsonl-file-system.js'
import { errorCodeOf, fsyncDirectory, writePrefixedTemp } from './jsonl-file-operations.js'
import type { RepairPlan } from './jsonl-log-reader.js'

/** A log codec, named as the `compression` option names it. */
export type Compression = 'none' | 'gzip' | 'zstd'

/** A log file whose committed state the adapter knows. */
export interface LogState {
  /** The log file. */
  readonly path: string
  /** Its codec (from its extension). */
  readonly compression: Compression
  /** The seq the next appended event carries. */
  nextSeq: number
  /** The file size after the last successful write or scan. */
  size: number
  /**
   * Bytes were written by an append asked not to sync (`sync: false`) and no `fdatasync` has
   * covered them since: the next synced append, or an empty one, syncs them.
   */
  unsynced?: boolean
}

/** What a rewrite needs from the adapter. */
export interface RepairContext {
  /** The file system. */
  readonly fileSystem: JsonlFileSystem
  /** The directory of the logs (fsynced after `link` and `rename`). */
  readonly dir: string
  /** The clock of quarantine names. */
  readonly now: () => number
  /** Store chunk runs as rows. */
  readonly packChunks: boolean
  /** Encodes batch text with a codec (one frame when compressed); throws `ZSTD_UNAVAILABLE` before any write. */
  encode(compression: Compression, text: string): Promise<Uint8Array>
  /** Rejects `LeaseLostError` when the lock no longer carries the lease's token. */
  checkToken(): Promise<void>
  /** The committed state right after the cut, before the closers are written. */
  cut(log: LogState): void
  /** One durable write at `log.size`, rolled back on failure; advances `log`. */
  writeDurably(handle: JsonlFileHandle, log: LogState, bytes: Uint8Array, count: number): Promise<void>
}

/** The log being repaired. */
export interface RepairTarget {
  /** The log, open read-write at the revision the tail was read at. */
  readonly handle: JsonlFileHandle
  /** Its path. */
  readonly path: string
  /** Its codec. */
  readonly compression: Compression
  /** Its header (rewritten when the header frame held damage). */
  readonly header: SessionHeader
  /** How to cut it. */
  readonly plan: RepairPlan
  /** `corrupt` quarantines the original first. */
  readonly kind: 'torn' | 'corrupt'
  /** The closers, seqs from `plan.nextSeq`. */
  readonly closers: readonly SessionEvent[]
}

/**
 * Rewrites the tail of a log so it holds the kept prefix, the rewritten records and the closers
 * as one batch: a plain log, or a compressed one with nothing recovered, is cut and appended in
 * place; a compressed log with recovered records is rewritten through a temp file renamed over it;
 * a corrupt one is rewritten the same way after its damaged original is linked to
 * `<file>.corrupt-<now()>`.
 *
 * @internal
 * @returns the committed state of the repaired log, and the quarantine path of a `corrupt` tail
 */
export async function rewriteTail(
  context: RepairContext,
  target: RepairTarget,
): Promise<LogState & { readonly quarantine?: string }> {
  const { fileSystem, packChunks } = context
  const { handle, path, compression, plan, closers } = target
  const rewrite = compression !== 'none' && (plan.rewrite.length > 0 || plan.rewriteHeader)
  if (target.kind !== 'corrupt' && !rewrite) {
    const bytes =
      closers.length === 0 ? undefined : await context.encode(compression, encodeBatch(closers, { packChunks }))
    await context.checkToken()
    await fileSystem.ftruncate(handle, plan.keepBytes)
    await fileSystem.fsync(handle)
    // A crash (or a failed write) from here on leaves the committed prefix: its closers derive again.
    const log: LogState = { path, compression, nextSeq: plan.nextSeq, size: plan.keepBytes }
    context.cut(log)
    if (bytes !== undefined) await context.writeDurably(handle, log, bytes, closers.length)
    return log
  }
  const batch = [...plan.rewrite, ...closers]
  const chunks: Uint8Array[] = []
  if (plan.rewriteHeader) chunks.push(await context.encode(compression, encodeHeaderLine(target.header)))
  if (batch.length > 0) chunks.push(await context.encode(compression, encodeBatch(batch, { packChunks })))
  await context.checkToken()
  const tempPath = await writePrefixedTemp(fileSystem, handle, path, plan.keepBytes, chunks)
  let quarantine: string | undefined
  try {
    if (target.kind === 'corrupt') {
      // The damaged original stays byte-identical under its quarantine name.
      quarantine = await quarantineOriginal(context, handle, path)
      await fsyncDirectory(fileSystem, context.dir)
    }
    await fileSystem.rename(tempPath, path)
    await fsyncDirectory(fileSystem, context.dir)
  } finally {
    await fileSystem.unlink(tempPath).catch(() => undefined)
  }
  let size = plan.keepBytes
  for (const chunk of chunks) size += chunk.length
  return {
    path,
    compression,
    nextSeq: plan.nextSeq + closers.length,
    size,
    ...(quarantine === undefined ? {} : { quarantine }),
  }
}

/** How many quarantine names after `<file>.corrupt-<now()>` a repair tries before it gives up. */
const QUARANTINE_NAMES = 100

/**
 * Links the damaged log to its quarantine name and returns that name. A rerun after a crash between
 * the link and the rename finds the original already linked (a `<file>.corrupt-<n>` with the log's
 * own inode) and reuses it, so it neither fails nor leaves a second copy; a name taken by another
 * file moves on to `<n + 1>`.
 */
async function quarantineOriginal(context: RepairContext, handle: JsonlFileHandle, path: string): Promise<string> {
  const { fileSystem } = context
  const base = basename(path)
  const own = await fileSystem.fstat(handle)
  const pattern = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.corrupt-\\d+$`)
  for (const name of await fileSystem.readdir(context.dir)) {
    if (!pattern.test(name)) continue
    const candidate = join(context.dir, name)
    const stats = await fileSystem.stat(candidate).catch(() => undefined)
    if (stats !== undefined && stats.ino === own.ino && stats.dev === own.dev) return candidate
  }
  const first = context.now()
  for (let attempt = 0; ; attempt++) {
    const quarantine = `${path}.corrupt-${first + attempt}`
    try {
      await fileSystem.link(path, quarantine)
      return quarantine
    } catch (error) {
      if (errorCodeOf(error) !== 'EEXIST' || attempt + 1 >= QUARANTINE_NAMES) throw error
    }
  }
}
