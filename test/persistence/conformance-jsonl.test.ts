import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as wasmZstd from '@foxglove/wasm-zstd'
import { afterAll, beforeAll } from 'vitest'
import type { LockHolder } from '../../src/errors/lock-holder.js'
import { type FrameCodec, gzipCodec, zstdCodec } from '../../src/persistence/jsonl/frame-codec.js'
import { jsonlPersistence } from '../../src/persistence/jsonl/jsonl-persistence.js'
import { randomHex } from '../../src/persistence/random-hex.js'
import { fileNameOf } from '../../src/persistence/session-file-name.js'
import { type ConformanceTarget, runPersistenceConformance } from '../../src/testing/run-persistence-conformance.js'
import { type Bundle, bundle } from '../helpers/child-process.js'
import { damageLine, vitestRunner } from './conformance-helpers.js'

await wasmZstd.isLoaded

/** The writer child of `spawnWriter`, bundled once (a bundle starts far faster than tsx). */
let writerChild: Bundle | undefined
beforeAll(async () => {
  writerChild = await bundle('test/persistence/conformance-writer-child.ts', { external: ['@foxglove/wasm-zstd'] })
}, 60_000)
afterAll(async () => {
  await writerChild?.remove()
})

type Compression = 'none' | 'gzip' | 'zstd'

const extensions = { none: '.jsonl', gzip: '.jsonl.gz', zstd: '.jsonl.zst' } as const satisfies Record<
  Compression,
  string
>
const utf8 = new TextEncoder()
const latin = new TextDecoder()

/** `@foxglove/wasm-zstd` as the zstd writer on runtimes whose `node:zlib` lacks zstd (Node 20). */
const zstdEncoder = (bytes: Uint8Array, level: number): Uint8Array => new Uint8Array(wasmZstd.compress(bytes, level))

function codecOf(compression: Compression): FrameCodec | undefined {
  if (compression === 'none') return undefined
  return compression === 'gzip' ? gzipCodec() : zstdCodec({ zstdEncoder })
}

/** The path of the one log file of `id` in `dir`, or where a new one of `compression` goes. */
async function logPath(dir: string, id: string, compression: Compression): Promise<string> {
  const base = fileNameOf(id)
  const names = (await readdir(dir)).filter((name) =>
    Object.values(extensions).some((extension) => name === `${base}${extension}`),
  )
  if (names.length > 1) throw new Error(`${id} has ${names.length} log files: ${names.join(', ')}`)
  return join(dir, names[0] ?? `${base}${extensions[compression]}`)
}

/** Rewrites the line (plain) or the frame (compressed) holding `seq` so that its record is unparsable. */
async function damageRecord(dir: string, id: string, seq: number, compression: Compression): Promise<void> {
  const path = await logPath(dir, id, compression)
  const bytes = new Uint8Array(await readFile(path))
  const codec = codecOf(compression)
  if (codec === undefined) {
    const damaged = damageLine(latin.decode(bytes), seq, 1)
    if (damaged === undefined) throw new Error(`no line of ${path} holds seq ${seq}`)
    await writeFile(path, utf8.encode(damaged))
    return
  }
  const { frames } = codec.walk(bytes)
  for (const [index, frame] of frames.entries()) {
    const damaged = damageLine(latin.decode(frame.decoded), seq, index === 0 ? 1 : 0)
    if (damaged === undefined) continue
    const replacement = await codec.encode(utf8.encode(damaged))
    const end = frame.offset + frame.length
    await writeFile(path, Buffer.concat([bytes.subarray(0, frame.offset), replacement, bytes.subarray(end)]))
    return
  }
  throw new Error(`no frame of ${path} holds seq ${seq}`)
}

/** Writes a lock file as an earlier process would have left it, whole by rename as the adapter does. */
async function plantLock(path: string, holder: LockHolder): Promise<void> {
  await writeFile(`${path}.planting`, JSON.stringify({ ...holder, token: randomHex(16) }))
  await rename(`${path}.planting`, path)
}

/** Rewrites a lock file as if its holder had been frozen past its TTL: its last heartbeat at epoch 0. */
async function ageLock(path: string): Promise<void> {
  const lock = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>
  // Whole, by rename, as the adapter replaces locks: a reader never sees half of it.
  await writeFile(`${path}.aging`, JSON.stringify({ ...lock, acquiredAt: 0, heartbeatAt: 0 }))
  await rename(`${path}.aging`, path)
}

async function jsonlTarget(compression: Compression): Promise<ConformanceTarget> {
  const dir = await mkdtemp(join(tmpdir(), `yoke-conformance-${compression}-`))
  const open = () => jsonlPersistence({ dir, compression, ...(compression === 'zstd' ? { zstdEncoder } : {}) })
  return {
    adapter: open(),
    reopen: open,
    bytes: {
      read: async (id) => new Uint8Array(await readFile(await logPath(dir, id, compression))),
      write: async (id, bytes) => writeFile(await logPath(dir, id, compression), bytes),
    },
    damageRecord: (id, seq) => damageRecord(dir, id, seq, compression),
    expireLease: (id) => unlink(join(dir, `${fileNameOf(id)}.lock`)),
    ageLease: (id) => ageLock(join(dir, `${fileNameOf(id)}.lock`)),
    plantLease: (id, holder) => plantLock(join(dir, `${fileNameOf(id)}.lock`), holder),
    spawnWriter: () => {
      if (writerChild === undefined) throw new Error('the writer child is not bundled yet')
      // Without vitest's loader options: the bundle is plain JavaScript.
      const { NODE_OPTIONS: _loader, ...env } = process.env
      return spawn(process.execPath, [writerChild.file, JSON.stringify({ dir, compression })], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env,
      })
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  }
}

runPersistenceConformance("jsonlPersistence conformance, compression 'none'", () => jsonlTarget('none'), {
  runner: vitestRunner,
})
// Compressed logs run the large batch at 50 000 events: fflate's gzip and the wasm zstd encoder
// cost 2.5–4.5 µs per event each way here (150 000 events ≈ 10 s per codec, append plus two loads),
// while 50 000 (≈ 3.5 MB, one frame, far past the 1 MiB async-compression threshold) covers the
// same path. The 150 000-event batch runs on 'none' and in the memory suite (same encoder, one write).
const compressedLargeBatch = 50_000
runPersistenceConformance("jsonlPersistence conformance, compression 'gzip'", () => jsonlTarget('gzip'), {
  runner: vitestRunner,
  largeBatch: compressedLargeBatch,
})
runPersistenceConformance("jsonlPersistence conformance, compression 'zstd'", () => jsonlTarget('zstd'), {
  runner: vitestRunner,
  largeBatch: compressedLargeBatch,
})
