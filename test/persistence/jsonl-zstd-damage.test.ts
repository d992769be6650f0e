import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as wasmZstd from '@foxglove/wasm-zstd'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { PersistenceCorruptionError } from '../../src/errors/persistence-corruption-error.js'
import { zstdCodec } from '../../src/persistence/jsonl/frame-codec.js'
import { type JsonlPersistence, jsonlPersistence } from '../../src/persistence/jsonl/jsonl-persistence.js'
import { xxhash64 } from '../../src/persistence/jsonl/xxhash64.js'
import { readZstdFrameLayout, withContentChecksum } from '../../src/persistence/jsonl/zstd-frames.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import type { SessionHeader } from '../../src/session/session-header.js'
import { rejectionOf } from '../helpers/outcomes.js'
import { expectError, freshHarness } from '../session/session-helpers.js'
import { L1, logOf } from '../session/builders.js'

const H1: SessionHeader = { version: 1, id: 's1', createdAt: 1000, cwd: '/w' }
const NAME = 's1.jsonl.zst'

let dir: string
let opened: JsonlPersistence[] = []

beforeAll(async () => {
  await wasmZstd.isLoaded
})

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-zstd-damage-'))
  opened = []
})

afterEach(async () => {
  for (const adapter of opened) await adapter.close()
  await rm(dir, { recursive: true, force: true })
})

const zstdEncoder = (bytes: Uint8Array, level: number): Uint8Array => new Uint8Array(wasmZstd.compress(bytes, level))

function adapter(): JsonlPersistence {
  const created = jsonlPersistence({ dir, compression: 'zstd', zstdEncoder })
  opened.push(created)
  return created
}

/** Writes the log through the adapter, one frame per batch. */
async function store(batches: readonly (readonly SessionEvent[])[]): Promise<Uint8Array> {
  const writer = adapter()
  await writer.create(H1)
  const lease = await writer.acquire('s1')
  let seq = 0
  for (const batch of batches) {
    await writer.append('s1', batch, { expectedSeq: seq, lease })
    seq += batch.length
  }
  await lease.release()
  return new Uint8Array(await readFile(join(dir, NAME)))
}

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const copy = new Uint8Array(bytes)
  copy[bit >> 3] = (copy[bit >> 3] ?? 0) ^ (1 << (bit & 7))
  return copy
}

describe('zstd logs: damage with valid frames after it', () => {
  it('a flipped block-size bit of a middle frame that lands inside later frames is CORRUPT_LOG, and the file is unchanged', async () => {
    const events = logOf(L1())
    const full = await store([events.slice(0, 2), events.slice(2, 4), events.slice(4)])
    const frames = zstdCodec({ onUnavailable: 'reject-writes' }).walk(full).frames
    expect(frames).toHaveLength(4)
    const middle = frames[1]!
    const layout = readZstdFrameLayout(full, middle.offset)
    if (layout.kind !== 'frame') throw new Error('the middle frame does not parse')
    const blockHeader = middle.offset + layout.headerLength
    const originalSize =
      ((full[blockHeader] ?? 0) | ((full[blockHeader + 1] ?? 0) << 8) | ((full[blockHeader + 2] ?? 0) << 16)) >>> 3
    let checked = 0
    // The size field is bits 3–23 of the 3-byte little-endian block header.
    for (let bit = 3; bit < 24; bit++) {
      const size = originalSize ^ (1 << (bit - 3))
      const blockEnd = blockHeader + 3 + size
      if (blockEnd <= frames[2]!.offset || blockEnd >= full.length) continue
      const damaged = flipBit(full, blockHeader * 8 + bit)
      await writeFile(join(dir, NAME), damaged)
      const harness = await freshHarness({ persistence: adapter() })
      const error = await rejectionOf(harness.persistence.load('s1'))
      await harness.close()
      expectError(error, PersistenceCorruptionError, 'CORRUPT_LOG', { offset: middle.offset })
      expect(new Uint8Array(await readFile(join(dir, NAME)))).toEqual(damaged)
      checked++
    }
    expect(checked).toBeGreaterThan(0)
  })
})

const zstdCli = spawnSync('zstd', ['--version']).status === 0

describe('zstd logs: content checksums', () => {
  it('XXH64 matches the reference values', () => {
    const hex = (text: string): string => {
      const [high, low] = xxhash64(new TextEncoder().encode(text))
      return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0')
    }
    expect(hex('')).toBe('ef46db3751d8e999')
    expect(hex('a')).toBe('d24ec4f1a98c6e5b')
    expect(hex('abc')).toBe('44bc2cf5ad770999')
    expect(hex('Nobody inspects the spammish repetition')).toBe('fbcea83c8a378bf1')
  })

  it('every frame the adapter writes carries a content checksum', async () => {
    const events = logOf(L1())
    const full = await store([events.slice(0, 3), events.slice(3)])
    const frames = zstdCodec({ onUnavailable: 'reject-writes' }).walk(full).frames
    expect(frames).toHaveLength(3)
    for (const frame of frames) {
      const layout = readZstdFrameLayout(full, frame.offset)
      expect(layout.kind === 'frame' && layout.checksum, `frame at ${frame.offset}`).toBe(true)
    }
  })

  it.skipIf(!zstdCli)('zstd -t accepts the checksummed frames, and rejects one whose checksum is wrong', async () => {
    const full = await store([logOf(L1())])
    expect(spawnSync('zstd', ['-t', '-q'], { input: full }).status).toBe(0)
    const damaged = flipBit(full, (full.length - 1) * 8)
    expect(spawnSync('zstd', ['-t', '-q'], { input: damaged }).status).not.toBe(0)
  })

  it('withContentChecksum leaves a frame that has one unchanged', () => {
    const text = new TextEncoder().encode('{"a":1}\n')
    const once = withContentChecksum(new Uint8Array(wasmZstd.compress(text, 3)), text)
    expect(withContentChecksum(once, text)).toBe(once)
  })

  it('a middle frame that still decodes after a flipped bit but fails its checksum is CORRUPT_LOG; the last is a reported tail', async () => {
    const events = logOf(L1())
    const full = await store([events.slice(0, 2), events.slice(2, 4), events.slice(4)])
    const frames = zstdCodec({ onUnavailable: 'reject-writes' }).walk(full).frames
    const middle = frames[1]!
    // The checksum's own bytes: a flip there leaves the content decodable and intact, only the
    // stored checksum disagrees.
    const damaged = flipBit(full, (middle.offset + middle.length - 2) * 8)
    await writeFile(join(dir, NAME), damaged)
    const error = await rejectionOf(adapter().load('s1'))
    expectError(error, PersistenceCorruptionError, 'CORRUPT_LOG', { offset: middle.offset, defect: 'frame' })
    expect(new Uint8Array(await readFile(join(dir, NAME)))).toEqual(damaged)
    const last = frames.at(-1)!
    expect(frames).toHaveLength(4)
    await writeFile(join(dir, NAME), flipBit(full, (last.offset + last.length - 2) * 8))
    const loaded = await adapter().load('s1')
    expect(loaded.torn).toMatchObject({ defect: 'frame', offset: last.offset })
    expect(loaded.events.map((event) => event.seq)).toEqual([0, 1, 2, 3])
  })
})

describe('zstd logs: a bit-flip sweep', () => {
  it('every bit of a middle frame: never loaded silently changed, never cut, never a hang', async () => {
    const events = logOf(L1())
    const full = await store([events.slice(0, 2), events.slice(2, 4), events.slice(4)])
    const frames = zstdCodec({ onUnavailable: 'reject-writes' }).walk(full).frames
    expect(frames).toHaveLength(4)
    const middle = frames[1]!
    const outcomes: Record<string, number> = {}
    const reader = adapter()
    for (let bit = middle.offset * 8; bit < (middle.offset + middle.length) * 8; bit++) {
      await writeFile(join(dir, NAME), flipBit(full, bit))
      let outcome: string
      try {
        const loaded = await reader.load('s1')
        const same = JSON.stringify(loaded.events) === JSON.stringify(events) && loaded.torn === undefined
        outcome = same ? 'unchanged' : `loaded differently at bit ${bit}`
      } catch (error) {
        outcome = (error as { code?: string }).code ?? String(error)
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
    }
    // Damage in a middle frame, with valid frames after it, is always reported as corruption.
    expect(Object.keys(outcomes).sort()).toEqual(expect.arrayContaining(['CORRUPT_LOG']))
    for (const outcome of Object.keys(outcomes)) expect(['CORRUPT_LOG', 'unchanged']).toContain(outcome)
  }, 60_000)
})
