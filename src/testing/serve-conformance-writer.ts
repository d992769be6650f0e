/**
 * The child side of the conformance suite's process tests (a writer frozen past its TTL, SIGKILL
 * mid-append and mid-turn): run it in a child process over the storage under test.
 *
 * @module
 */
import type { Readable, Writable } from 'node:stream'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { ModelAdapter } from '../model/model-adapter.js'
import type { LeaseOptions } from '../persistence/lease-options.js'
import type { Lease, PersistenceAdapter } from '../persistence/persistence-adapter.js'
import type { SessionEvent } from '../session/session-event.js'
import { baseLog, eventsFrom, headerOf, note, textChunk, turnStart } from './conformance/conformance-events.js'
import { digestOfTexts, type WriterCommand, type WriterReply } from './conformance/writer-protocol.js'
import type { ScriptEntry } from './scripted-model.js'
import { scriptedModel } from './scripted-model.js'

/**
 * What the writer child needs of a harness: the part of `Harness` it uses, so `createHarness`
 * from `yoke` fits without `yoke/testing` naming the harness types.
 */
export interface ConformanceWriterHarness {
  /** Creates an agent over a new session id. */
  createAgent(options: { readonly sessionId: string }): Promise<{
    /** Runs one turn. */
    run(input: string): Promise<{
      /** Why the turn ended. */
      readonly reason: {
        /** `'completed'`, `'error'`, `'aborted'`… */
        readonly kind: string
        /** With `'error'`: what failed. */
        readonly error?: {
          /** The error's stable code. */
          readonly code: string
          /** Its message. */
          readonly message: string
        }
      }
    }>
  }>
  /** Opens a stored session (resuming it). */
  openAgent(sessionId: string): Promise<{
    /** Ends the agent, flushing its session. */
    dispose(): Promise<void>
  }>
  /** Closes the harness. */
  close(): Promise<void>
}

/** The options the writer child passes to `createHarness`. */
export interface ConformanceWriterHarnessOptions {
  /** The adapter under test, wrapped to acknowledge its appends. */
  readonly persistence: PersistenceAdapter
  /** A scripted model. */
  readonly model: ModelAdapter
  /** A tiny write-behind window, so a turn flushes many times. */
  readonly writeBehind?: {
    /** The batching window in milliseconds. */
    readonly windowMs: number
  }
  /** Logs to stderr (stdout carries the protocol). */
  readonly logger: {
    /** Writes a debug line. */
    debug(message: string): void
    /** Writes an info line. */
    info(message: string): void
    /** Writes a warning line. */
    warn(message: string): void
    /** Writes an error line. */
    error(message: string): void
  }
}

/** Options of {@link serveConformanceWriter}. */
export interface ConformanceWriterOptions {
  /**
   * Makes an adapter over the same storage as the suite's target, with the lease timing the suite
   * asks for (a short TTL, so a frozen writer expires quickly).
   *
   * @param options - `lease`, to pass to the adapter factory
   * @returns the adapter
   */
  adapter(options: { readonly lease: Required<LeaseOptions> }): PersistenceAdapter | Promise<PersistenceAdapter>
  /**
   * `createHarness` from `yoke`, for the mid-turn crash test and the resume after it (passed in,
   * so `yoke/testing` carries no second copy of the runtime).
   */
  readonly createHarness: (options: ConformanceWriterHarnessOptions) => Promise<ConformanceWriterHarness>
  /**
   * Where the command comes from.
   *
   * @default process.stdin
   */
  readonly input?: Readable
  /**
   * Where the replies go.
   *
   * @default process.stdout
   */
  readonly output?: Writable
}

/** mulberry32: a small seedable PRNG in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let value = state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296
  }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Reads the first line of `input`, then stops reading (so the process may exit). */
function firstLine(input: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (chunk: Buffer | string): void => {
      text += chunk.toString()
      const end = text.indexOf('\n')
      if (end === -1) return
      input.off('data', onData)
      input.off('end', onEnd)
      input.pause()
      input.destroy()
      resolve(text.slice(0, end))
    }
    const onEnd = (): void =>
      reject(new InvalidArgumentError({ argument: 'input', reason: 'ended before a command line', value: text }))
    input.on('data', onData)
    input.once('end', onEnd)
  })
}

function isCommand(value: unknown): value is WriterCommand {
  if (typeof value !== 'object' || value === null) return false
  const record = value as Record<string, unknown>
  return (
    ['hold', 'append', 'turns', 'resume'].includes(record['op'] as string) &&
    typeof record['sessionId'] === 'string' &&
    typeof record['ttlMs'] === 'number' &&
    typeof record['heartbeatMs'] === 'number'
  )
}

/** An adapter that replies `acked` after every append it resolves. */
function acking(inner: PersistenceAdapter, reply: (value: WriterReply) => void): PersistenceAdapter {
  const adapter: PersistenceAdapter = {
    name: inner.name,
    create: (header) => inner.create(header),
    append: async (sessionId, events, options) => {
      await inner.append(sessionId, events, options)
      if (events.length === 0) return
      const texts = options.texts ?? events.map((event) => JSON.stringify(event))
      reply({ reply: 'acked', first: events[0]!.seq, last: events.at(-1)!.seq, digest: digestOfTexts(texts) })
    },
    load: (sessionId, options) => inner.load(sessionId, options),
    commitRepair: (sessionId, torn, closers) => inner.commitRepair(sessionId, torn, closers),
    list: (options) => inner.list(options),
    acquire: (sessionId) => inner.acquire(sessionId),
    close: () => inner.close(),
  }
  const optional = adapter as { -readonly [K in keyof PersistenceAdapter]: PersistenceAdapter[K] }
  if (inner.readFrom !== undefined)
    optional.readFrom = (sessionId, fromSeq, options) => inner.readFrom!(sessionId, fromSeq, options)
  if (inner.delete !== undefined) optional.delete = (sessionId) => inner.delete!(sessionId)
  if (inner.inspectLease !== undefined)
    optional.inspectLease = (sessionId, options) => inner.inspectLease!(sessionId, options)
  if (inner.breakLease !== undefined) optional.breakLease = (sessionId) => inner.breakLease!(sessionId)
  return adapter
}

/** A seeded batch from `seq` on: notes (now and then a long one, so a kill can tear a write) and chunk runs. */
function seededBatch(random: () => number, seq: number): SessionEvent[] {
  const plans = []
  const count = 1 + Math.floor(random() * 12)
  for (let index = 0; index < count; index++) {
    const roll = random()
    if (roll < 0.5) plans.push(textChunk(1, 1, `c${seq + index} `))
    else if (roll < 0.9) plans.push(note({ at: seq + index, text: 'x'.repeat(Math.floor(random() * 64)) }))
    else plans.push(note({ at: seq + index, text: 'é😀'.repeat(2_000 + Math.floor(random() * 20_000)) }))
  }
  return eventsFrom(seq, plans)
}

/** The scripted replies of the mid-turn writer: streamed text in small chunks, a few ms apart. */
function seededScript(random: () => number): ScriptEntry[] {
  return Array.from({ length: 2_000 }, () => ({
    text: `reply ${'word '.repeat(4 + Math.floor(random() * 24))}`,
    chunkSize: 1 + Math.floor(random() * 6),
    chunkDelayMs: Math.floor(random() * 2),
  }))
}

async function hold(
  adapter: PersistenceAdapter,
  command: Extract<WriterCommand, { op: 'hold' }>,
  reply: (value: WriterReply) => void,
  held: (lease: Lease) => void,
): Promise<void> {
  const id = command.sessionId
  await adapter.create(headerOf(id))
  const lease = await adapter.acquire(id)
  held(lease)
  const log = baseLog()
  await adapter.append(id, log, { expectedSeq: 0, lease })
  reply({ reply: 'held', owner: lease.owner, epoch: lease.epoch })
  for (let next = log.length, turn = 2; ; next++, turn++) {
    await pause(command.everyMs)
    await adapter.append(id, eventsFrom(next, [turnStart(turn)]), { expectedSeq: next, lease })
  }
}

async function appendForever(
  adapter: PersistenceAdapter,
  command: Extract<WriterCommand, { op: 'append' }>,
  held: (lease: Lease) => void,
): Promise<never> {
  const id = command.sessionId
  const random = seeded(command.seed)
  await adapter.create(headerOf(id))
  const lease = await adapter.acquire(id)
  held(lease)
  for (let next = 0; ; ) {
    const batch = seededBatch(random, next)
    await adapter.append(id, batch, { expectedSeq: next, lease })
    next += batch.length
  }
}

async function runTurns(
  adapter: PersistenceAdapter,
  command: Extract<WriterCommand, { op: 'turns' }>,
  createHarness: ConformanceWriterOptions['createHarness'],
): Promise<WriterReply> {
  const random = seeded(command.seed)
  const harness = await createHarness({
    persistence: adapter,
    model: scriptedModel(seededScript(random)),
    writeBehind: { windowMs: command.windowMs },
    logger: stderrLogger,
  })
  try {
    const agent = await harness.createAgent({ sessionId: command.sessionId })
    for (let turn = 1; ; turn++) {
      const result = await agent.run(`turn ${turn}`)
      // A turn that did not complete (its writes failed, its lease was lost) ends the loop.
      if (result.reason.kind !== 'completed') {
        const error = result.reason.kind === 'error' ? result.reason.error : undefined
        return {
          reply: 'error',
          name: 'TurnEnded',
          code: error?.code,
          message: `turn ${turn} ended ${result.reason.kind}${error === undefined ? '' : `: ${error.message}`}`,
          holderOwner: undefined,
          signalHolderOwner: undefined,
        }
      }
    }
  } finally {
    // Only reached on a failure (a kill ends it otherwise): close, so the process can exit.
    await harness.close().catch(() => undefined)
  }
}

async function resume(
  adapter: PersistenceAdapter,
  command: Extract<WriterCommand, { op: 'resume' }>,
  createHarness: ConformanceWriterOptions['createHarness'],
  reply: (value: WriterReply) => void,
): Promise<void> {
  const harness = await createHarness({ persistence: adapter, model: scriptedModel([]), logger: stderrLogger })
  try {
    const agent = await harness.openAgent(command.sessionId)
    await agent.dispose()
    reply({ reply: 'resumed' })
  } finally {
    await harness.close()
  }
}

/** Logs go to stderr: stdout carries the protocol. */
const stderrLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => void process.stderr.write(`[writer warn] ${message}\n`),
  error: (message: string) => void process.stderr.write(`[writer error] ${message}\n`),
}

function ownerOf(value: unknown): string | undefined {
  const holder = (value as { readonly holder?: { readonly owner?: unknown } } | null)?.holder
  return typeof holder?.owner === 'string' ? holder.owner : undefined
}

/**
 * Serves one command of the conformance suite's writer protocol, in a child process the target's
 * `spawnWriter` started: reads one JSON line from stdin (`hold`, `append`, `turns` or `resume`),
 * writes through an adapter made by `options.adapter` over the same storage as the suite's
 * target, and replies in JSON lines on stdout (`held`, `acked` after every append that resolved,
 * `resumed`, `error`). The suite freezes it (SIGSTOP), kills it (SIGKILL) and checks the storage.
 *
 * @param options - the adapter factory and `createHarness` from `yoke`
 * @returns a promise that settles when the command ended (`hold` after its append failed,
 *   `resume` once done); `append` and `turns` run until the process is killed
 * @throws `InvalidArgumentError` when `options.adapter` or `options.createHarness` is not a
 *   function, when the input ends before a line, or when the line is no writer-protocol command
 * @example
 * ```ts
 * // writer.ts, started by the target's spawnWriter with the directory as its argument
 * import { createHarness, jsonlPersistence } from 'yoke'
 * import { serveConformanceWriter } from 'yoke/testing'
 *
 * await serveConformanceWriter({
 *   adapter: ({ lease }) => jsonlPersistence({ dir: process.argv[2]!, lease }),
 *   createHarness,
 * })
 * ```
 */
export async function serveConformanceWriter(options: ConformanceWriterOptions): Promise<void> {
  for (const key of ['adapter', 'createHarness'] as const) {
    if (typeof options?.[key] !== 'function') {
      throw new InvalidArgumentError({
        argument: `options.${key}`,
        reason: 'must be a function',
        value: options?.[key],
      })
    }
  }
  const output = options.output ?? process.stdout
  const reply = (value: WriterReply): void => void output.write(`${JSON.stringify(value)}\n`)
  const line = await firstLine(options.input ?? process.stdin)
  let command: unknown
  try {
    command = JSON.parse(line)
  } catch {
    command = undefined
  }
  if (!isCommand(command)) {
    throw new InvalidArgumentError({ argument: 'command', reason: 'is no writer-protocol command', value: line })
  }
  const inner = await options.adapter({ lease: { ttlMs: command.ttlMs, heartbeatMs: command.heartbeatMs } })
  const adapter = acking(inner, reply)
  let lease: Lease | undefined
  const held = (taken: Lease): void => void (lease = taken)
  try {
    switch (command.op) {
      case 'hold':
        await hold(adapter, command, reply, held)
        break
      case 'append':
        await appendForever(adapter, command, held)
        break
      case 'turns':
        reply(await runTurns(adapter, command, options.createHarness))
        break
      case 'resume':
        await resume(adapter, command, options.createHarness, reply)
        break
    }
  } catch (error) {
    const record = error as { readonly name?: unknown; readonly code?: unknown; readonly message?: unknown }
    reply({
      reply: 'error',
      name: typeof record?.name === 'string' ? record.name : 'Error',
      code: typeof record?.code === 'string' ? record.code : undefined,
      message: typeof record?.message === 'string' ? record.message : String(error),
      holderOwner: ownerOf(error),
      signalHolderOwner: lease?.signal.aborted === true ? ownerOf(lease.signal.reason) : undefined,
    })
  } finally {
    await inner.close().catch(() => undefined)
  }
}
