/**
 * The options of `jsonlPersistence` and their validation.
 *
 * @module
 */
import { ErrorCode } from '../../errors/codes.js'
import { ConfigError } from '../../errors/config-error.js'
import { checkOptions, type OptionRule, optionRule } from '../../kernel/option-issues.js'
import { type LeaseOptions, type LeaseTiming, leaseOptionsIssue, leaseTiming } from '../lease-options.js'
import { type JsonlFileSystem, nodeFileSystem } from './jsonl-file-system.js'

/** Options of {@link jsonlPersistence}. */
export interface JsonlPersistenceOptions {
  /** The directory of the logs; made absolute once, created (mode 0700) by the first `acquire` or write. */
  readonly dir: string
  /**
   * The codec of new logs; existing files keep theirs (read from the extension). `'zstd'` needs
   * `node:zlib` zstd (Node >= 22.15) or a `zstdEncoder`.
   *
   * @default 'none'
   */
  readonly compression?: 'none' | 'gzip' | 'zstd'
  /**
   * Store runs of chunk deltas as one chunk-run row: three or more consecutive deltas of one step
   * and one stream part, within a batch. Loading gives back the same events, byte for byte.
   *
   * @default true
   */
  readonly packChunks?: boolean
  /**
   * Checksums for plain (`compression: 'none'`) logs. `'batch'` writes one check line before each
   * batch, `{"crc32":"…","bytes":n}`, and one with the header that also covers the header line; a
   * load then verifies every batch it covers, so a record damaged in a way that still parses is
   * `PersistenceCorruptionError CORRUPT_LOG` naming the file, byte and line instead of being
   * loaded, and a batch cut short by a crash is a torn tail as a whole. Lines no check line covers
   * (batches written before the option was on) load as before. Costs about 40 bytes per batch and
   * a CRC-32 pass over each write and load (see docs/persistence.md for measurements). Compressed
   * logs always carry their format's checksum per frame (gzip CRC-32, zstd XXH64), so this option
   * does not change them. Logs with check lines need this Yoke version or later to load.
   *
   * @default 'none'
   */
  readonly checksum?: 'none' | 'batch'
  /**
   * Guard each leased session with a lock file (cross-process exclusion); `false` keeps leases
   * in this instance only.
   *
   * @default true
   */
  readonly lock?: boolean
  /**
   * The lease timing: a holder rewrites its lock file's heartbeat every `heartbeatMs`; a lock whose
   * heartbeat is `ttlMs` old is taken over by the next `acquire`, whatever host or pid wrote it.
   * `ttlMs` must be greater than `heartbeatMs` (else `InvalidOptionsError`). With `lock: false`
   * there is nothing to renew.
   *
   * @default { ttlMs: 30000, heartbeatMs: 10000 }
   */
  readonly lease?: LeaseOptions
  /**
   * The piece size of plain reads, in bytes.
   *
   * @default 65536
   */
  readonly readChunkBytes?: number
  /**
   * The clock of lock `acquiredAt`, heartbeats, lease expiry and quarantine names (epoch ms).
   * Instances sharing a directory from several hosts compare heartbeats across clocks: keep the
   * hosts' clocks in sync (NTP) well within the TTL.
   *
   * @default Date.now
   */
  readonly now?: () => number
  /**
   * A zstd compressor for runtimes whose `node:zlib` lacks zstd: `(bytes, level) => one zstd
   * frame`. Checked at construction by a round trip through fzstd.
   *
   * @default undefined
   */
  readonly zstdEncoder?: (bytes: Uint8Array, level: number) => Uint8Array
  /**
   * The file-system seam (testing: inject faults).
   *
   * @default nodeFileSystem
   */
  readonly fileSystem?: JsonlFileSystem
}

/**
 * The options with their defaults filled in.
 *
 * @internal
 */
export type ValidatedJsonlOptions = Required<Omit<JsonlPersistenceOptions, 'zstdEncoder' | 'lease'>> &
  Pick<JsonlPersistenceOptions, 'zstdEncoder'> & { readonly lease: LeaseTiming }

/**
 * A `ConfigError CONFIG_INVALID` for `option`.
 *
 * @internal
 */
export function configInvalid(option: string, value: unknown, reason: string): ConfigError {
  return new ConfigError({ option, value, reason, code: ErrorCode.CONFIG_INVALID })
}

/**
 * The known keys of `jsonlPersistence` options: their values are checked below, one `ConfigError
 * CONFIG_INVALID` naming the option; the shared check only refuses a non-object and unknown keys.
 */
const knownKeys: Readonly<Record<string, OptionRule>> = Object.freeze({
  dir: optionRule.any,
  compression: optionRule.any,
  packChunks: optionRule.any,
  checksum: optionRule.any,
  lock: optionRule.any,
  lease: leaseOptionsIssue,
  readChunkBytes: optionRule.any,
  now: optionRule.any,
  zstdEncoder: optionRule.any,
  fileSystem: optionRule.any,
})

/**
 * Checks the options of `jsonlPersistence` and fills the defaults.
 *
 * @internal
 * @throws `InvalidOptionsError` for options that are not an object or hold an unknown key, or a
 *   bad `lease` (a TTL not greater than the heartbeat);
 *   `ConfigError` `CONFIG_INVALID` naming the option for a bad value
 */
export function validateJsonlOptions(options: JsonlPersistenceOptions): ValidatedJsonlOptions {
  // `dir` is required, so a missing options object is a root issue too.
  checkOptions(
    (options ?? null) as JsonlPersistenceOptions,
    knownKeys,
    '{ dir, compression?, packChunks?, checksum?, lock?, lease?, readChunkBytes?, now?, zstdEncoder?, fileSystem? }',
    'jsonlPersistence options',
  )
  const {
    dir,
    compression = 'none',
    packChunks = true,
    checksum = 'none',
    lock = true,
    readChunkBytes = 65_536,
    now = Date.now,
    fileSystem = nodeFileSystem,
  } = options
  if (typeof dir !== 'string' || dir.length === 0 || dir.includes('\0'))
    throw configInvalid('dir', dir, 'must be a non-empty path')
  if (compression !== 'none' && compression !== 'gzip' && compression !== 'zstd') {
    throw configInvalid('compression', compression, "must be 'none', 'gzip' or 'zstd'")
  }
  if (typeof packChunks !== 'boolean') throw configInvalid('packChunks', packChunks, 'must be a boolean')
  if (checksum !== 'none' && checksum !== 'batch')
    throw configInvalid('checksum', checksum, "must be 'none' or 'batch'")
  if (typeof lock !== 'boolean') throw configInvalid('lock', lock, 'must be a boolean')
  if (!(Number.isSafeInteger(readChunkBytes) && readChunkBytes > 0)) {
    throw configInvalid('readChunkBytes', readChunkBytes, 'must be a positive safe integer')
  }
  if (typeof now !== 'function') throw configInvalid('now', now, 'must be a function returning epoch milliseconds')
  if (typeof fileSystem !== 'object' || fileSystem === null)
    throw configInvalid('fileSystem', fileSystem, 'must be a JsonlFileSystem')
  if (options.zstdEncoder !== undefined && typeof options.zstdEncoder !== 'function') {
    throw configInvalid('zstdEncoder', options.zstdEncoder, 'must be a function (bytes, level) => Uint8Array')
  }
  const result = {
    dir,
    compression,
    packChunks,
    checksum,
    lock,
    lease: leaseTiming(options.lease),
    readChunkBytes,
    now,
    fileSystem,
  }
  return options.zstdEncoder === undefined ? result : { ...result, zstdEncoder: options.zstdEncoder }
}
