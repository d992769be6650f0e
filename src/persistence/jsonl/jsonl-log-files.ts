/**
 * The files of a JSONL log directory: names and codecs of the logs of an id, the lock path, listing
 * by suffix, and the directory itself (made on first use, 0700).
 *
 * @module
 */
import { dirname, join } from 'node:path'
import { ErrorCode } from '../../errors/codes.js'
import { PersistenceCorruptionError } from '../../errors/persistence-corruption-error.js'
import { PersistenceError } from '../../errors/persistence-error.js'
import { fileNameOf, sessionIdOfFileName } from '../session-file-name.js'
import { type FrameCodec, gzipCodec, zstdCodec } from './frame-codec.js'
import type { JsonlFileSystem } from './jsonl-file-system.js'
import { errorCodeOf, fsyncDirectory } from './jsonl-file-operations.js'
import { configInvalid } from './jsonl-persistence-options.js'
import type { Compression } from './jsonl-repair.js'

/** The file suffix of each codec. */
export const logExtensions = { none: '.jsonl', gzip: '.jsonl.gz', zstd: '.jsonl.zst' } as const satisfies Record<
  Compression,
  string
>
/** What follows a log's name in a leftover of it: a quarantine, a temp file, a sidecar index. */
const LEFTOVER = /^\.(?:corrupt-\d+|[0-9a-f]{12}\.tmp|idx)$/
/** Longest first, so `.jsonl.gz` is not read as an id ending in `.jsonl`. */
const suffixes = [
  ['zstd', logExtensions.zstd],
  ['gzip', logExtensions.gzip],
  ['none', logExtensions.none],
] as const satisfies readonly (readonly [Compression, string])[]

/** A log file found on disk. */
export interface FoundLog {
  /** Its path. */
  readonly path: string
  /** Its codec, from its extension: a file keeps the codec it was created with. */
  readonly compression: Compression
}

/** What a {@link JsonlLogFiles} needs. */
export interface JsonlLogFilesOptions {
  /** The absolute log directory. */
  readonly dir: string
  /** The file system. */
  readonly fileSystem: JsonlFileSystem
  /** The zstd codec of new files when `compression` is `'zstd'` (built, and checked, at construction). */
  readonly zstd?: FrameCodec
  /** The host zstd encoder, for writing into existing `.jsonl.zst` files. */
  readonly zstdEncoder?: ((bytes: Uint8Array, level: number) => Uint8Array) | undefined
}

/**
 * The files of one log directory.
 *
 * @internal
 */
export class JsonlLogFiles {
  /** The absolute log directory. */
  readonly dir: string
  readonly #fileSystem: JsonlFileSystem
  readonly #zstdEncoder: ((bytes: Uint8Array, level: number) => Uint8Array) | undefined
  readonly #codecs = new Map<Compression, FrameCodec>()
  #ready = false

  /** @param options - the directory, file system and zstd set-up */
  constructor(options: JsonlLogFilesOptions) {
    this.dir = options.dir
    this.#fileSystem = options.fileSystem
    this.#zstdEncoder = options.zstdEncoder
    if (options.zstd !== undefined) this.#codecs.set('zstd', options.zstd)
  }

  /** `<dir>/<name>`, without a suffix. */
  base(sessionId: string): string {
    return join(this.dir, fileNameOf(sessionId))
  }

  /** `<dir>/<name>.lock`. */
  lockPath(sessionId: string): string {
    return `${this.base(sessionId)}.lock`
  }

  /** The log path of `sessionId` in a codec. */
  logPath(sessionId: string, compression: Compression): string {
    return `${this.base(sessionId)}${logExtensions[compression]}`
  }

  /** The frame codec of a compression, or `undefined` for plain JSONL. */
  codecOf(compression: Compression): FrameCodec | undefined {
    if (compression === 'none') return undefined
    let codec = this.#codecs.get(compression)
    if (codec === undefined) {
      codec =
        compression === 'gzip'
          ? gzipCodec()
          : zstdCodec({
              onUnavailable: 'reject-writes',
              ...(this.#zstdEncoder === undefined ? {} : { zstdEncoder: this.#zstdEncoder }),
            })
      this.#codecs.set(compression, codec)
    }
    return codec
  }

  /** Every log file of the id, whatever its codec. */
  async existing(sessionId: string): Promise<FoundLog[]> {
    // The three stats run at once; their outcomes are read in suffix order, so the result and the
    // error reported (the first codec's that is not ENOENT) are those of a sequential scan.
    const outcomes = await Promise.all(
      suffixes.map(async ([compression]): Promise<{ readonly log: FoundLog } | { readonly error: unknown }> => {
        const path = this.logPath(sessionId, compression)
        try {
          await this.#fileSystem.stat(path)
          return { log: { path, compression } }
        } catch (error) {
          return { error }
        }
      }),
    )
    const found: FoundLog[] = []
    for (const outcome of outcomes) {
      if ('log' in outcome) found.push(outcome.log)
      else if (errorCodeOf(outcome.error) !== 'ENOENT') throw this.dirError(outcome.error)
    }
    return found
  }

  /**
   * The one log file of the id, whatever its codec (two files for one id are damage).
   *
   * @throws `PersistenceError SESSION_NOT_FOUND`, `PersistenceCorruptionError DUPLICATE_LOG`
   */
  async find(sessionId: string): Promise<FoundLog> {
    const found = await this.existing(sessionId)
    if (found.length > 1) throw this.duplicate(sessionId, found)
    const log = found[0]
    if (log === undefined) throw this.notFound(sessionId)
    return log
  }

  /**
   * The leftovers of an id's logs that `delete` removes with them: quarantined originals
   * (`<log>.corrupt-<time>`), temp files a crashed write left (`<log>.<hex>.tmp`) and sidecar
   * indexes (`<log>.idx`), whatever the codec. Lock files are the leases' business.
   *
   * @returns their paths; empty when the directory does not exist
   */
  async leftovers(sessionId: string): Promise<string[]> {
    let names: string[]
    try {
      names = await this.#fileSystem.readdir(this.dir)
    } catch (error) {
      if (errorCodeOf(error) === 'ENOENT') return []
      throw this.dirError(error)
    }
    const logNames = suffixes.map(([, suffix]) => `${fileNameOf(sessionId)}${suffix}`)
    const paths: string[] = []
    for (const name of names) {
      if (logNames.some((logName) => name.startsWith(logName) && LEFTOVER.test(name.slice(logName.length))))
        paths.push(join(this.dir, name))
    }
    return paths
  }

  /**
   * The log files of the directory by id (only names ending in a codec suffix count); empty when
   * the directory does not exist.
   */
  async list(): Promise<Map<string, FoundLog[]>> {
    const logs = new Map<string, FoundLog[]>()
    let names: string[]
    try {
      names = await this.#fileSystem.readdir(this.dir)
    } catch (error) {
      if (errorCodeOf(error) === 'ENOENT') return logs
      throw this.dirError(error)
    }
    for (const name of names) {
      const match = suffixes.find(([, suffix]) => name.endsWith(suffix))
      if (match === undefined) continue
      const sessionId = sessionIdOfFileName(name.slice(0, -match[1].length))
      if (sessionId === undefined) continue
      const entry = logs.get(sessionId) ?? []
      entry.push({ path: join(this.dir, name), compression: match[0] })
      logs.set(sessionId, entry)
    }
    return logs
  }

  /**
   * Creates the directory once (mode 0700, parent fsynced).
   *
   * @throws `ConfigError CONFIG_INVALID` (`option: 'dir'`) when it is not a directory
   */
  async ensure(): Promise<void> {
    if (this.#ready) return
    try {
      const stats = await this.#fileSystem.stat(this.dir)
      if (!stats.isDirectory()) throw configInvalid('dir', this.dir, 'exists and is not a directory')
    } catch (error) {
      if (errorCodeOf(error) !== 'ENOENT') throw this.dirError(error)
      await this.#fileSystem.mkdir(this.dir, { recursive: true, mode: 0o700 })
      await fsyncDirectory(this.#fileSystem, dirname(this.dir))
    }
    this.#ready = true
  }

  /** `ENOTDIR` (a path component is a file) as `ConfigError CONFIG_INVALID`; anything else as is. */
  dirError(error: unknown): unknown {
    return errorCodeOf(error) === 'ENOTDIR' ? configInvalid('dir', this.dir, 'exists and is not a directory') : error
  }

  /** `PersistenceError SESSION_NOT_FOUND`. */
  notFound(sessionId: string): PersistenceError {
    return new PersistenceError({
      code: ErrorCode.SESSION_NOT_FOUND,
      sessionId,
      detail: `no stored log (${this.logPath(sessionId, 'none')}, .gz or .zst)`,
    })
  }

  /** `PersistenceCorruptionError DUPLICATE_LOG`: two log files (of different codecs) for one id. */
  duplicate(sessionId: string, found: readonly FoundLog[]): PersistenceCorruptionError {
    const paths = found.map((log) => log.path)
    return new PersistenceCorruptionError({
      code: ErrorCode.DUPLICATE_LOG,
      sessionId,
      detail: `the session has ${paths.length} log files (${paths.join(', ')}); keep one and move the others away`,
      location: paths[0],
      actual: paths,
    })
  }
}
