/**
 * The crash child (run with `node --import tsx child.ts '<ChildOptions JSON>'`): a harness over
 * `jsonlPersistence({ dir, compression })` with a tiny write-behind window, one seeded producer
 * loop per session, `sessions.flush` at random points. After each flush resolves it writes
 * `{"session","acked","digest"}` + `\n` to fd 3: `acked` and every seq before it are durable and
 * `digest` is {@link digestOf} of those events. It runs until the parent kills it.
 *
 * With `mode: 'repair'` it instead cold-loads the given sessions (taking over the dead writer's
 * locks and repairing torn tails and open turns), so the parent can kill a repair half-way.
 *
 * @module
 */
import { writeSync } from 'node:fs'
import { createHarness, jsonlPersistence, type Logger, type Session } from '../../../src/index.js'
import type { JsonlFileSystem } from '../../../src/persistence/index.js'
import { nodeFileSystem } from '../../../src/persistence/jsonl/jsonl-file-system.js'
import { type ChildOptions, between, deriveSeed, mulberry32, produceSession, sessionIdsOf } from './workload.js'

const options = JSON.parse(process.argv[2] ?? '{}') as ChildOptions
const ackFd = 3

let zstdEncoder: ((bytes: Uint8Array, level: number) => Uint8Array) | undefined
if (options.compression === 'zstd') {
  const wasmZstd = await import('@foxglove/wasm-zstd')
  await wasmZstd.isLoaded
  zstdEncoder = (bytes, level) => new Uint8Array(wasmZstd.compress(bytes, level))
}

const stderr = (level: string) => (message: string, fields?: Readonly<Record<string, unknown>>) => {
  process.stderr.write(
    `[child ${level}] ${message}${fields === undefined ? '' : ` ${JSON.stringify(fields, (_key, value: unknown) => (value instanceof Error ? String(value) : value))}`}\n`,
  )
}
const logger: Logger = { debug: () => {}, info: () => {}, warn: stderr('warn'), error: stderr('error') }

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** POSIX allows `write` to write less than asked; the adapter loops. A kill between the halves tears the tail. */
function shortWriting(random: () => number): JsonlFileSystem {
  return {
    ...nodeFileSystem,
    write: async (handle, buffer, offset, length, position) => {
      if (length < 2 || random() >= 0.4) return nodeFileSystem.write(handle, buffer, offset, length, position)
      const result = await nodeFileSystem.write(handle, buffer, offset, between(random, 1, length - 1), position)
      await pause(between(random, 0, 4))
      return result
    },
  }
}

const harness = await createHarness({
  persistence: jsonlPersistence({
    dir: options.dir,
    compression: options.compression,
    ...(zstdEncoder === undefined ? {} : { zstdEncoder }),
    ...(options.shortWrites
      ? { fileSystem: shortWriting(mulberry32(deriveSeed(options.seed, options.run, 0xfff))) }
      : {}),
  }),
  writeBehind: { windowMs: options.windowMs },
  logger,
})

function ack(session: Session, digest: string): void {
  const line = `${JSON.stringify({ session: session.id, acked: session.length - 1, digest })}\n`
  writeSync(ackFd, line)
}

function produce(id: string, index: number): Promise<never> {
  return produceSession(harness, id, mulberry32(deriveSeed(options.seed, options.run, index)), ack)
}

if (options.mode === 'repair') {
  const ready = performance.now()
  writeSync(ackFd, '{"ready":true}\n')
  for (const id of options.sessionIds ?? []) {
    let failure: string | undefined
    try {
      await harness.persistence.load(id)
    } catch (error) {
      // The parent decides what is allowed (only SESSION_NOT_FOUND, for a session never written).
      failure = `${(error as { code?: string }).code ?? 'UNKNOWN'}: ${String(error)}`
    }
    writeSync(
      ackFd,
      `${JSON.stringify({ repaired: id, ms: Math.round(performance.now() - ready), ...(failure === undefined ? {} : { failure }) })}\n`,
    )
  }
  await harness.close()
} else {
  await Promise.all(sessionIdsOf(options.run, options.sessions).map((id, index) => produce(id, index)))
}
