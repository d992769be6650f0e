/**
 * `serveConformanceWriter`, the child side of the conformance suite's process cases, driven in
 * this process over streams and a memory store: its bad input, and the `hold` and `resume`
 * commands (the child-process runs are in the JSONL conformance suite).
 */
import { PassThrough } from 'node:stream'
import { describe, expect, test } from 'vitest'
import { createHarness, InvalidArgumentError, memoryPersistence } from 'yoke'
import { serveConformanceWriter } from 'yoke/testing'
import { createMemoryStore } from '../../src/persistence/memory-persistence.js'
import { interruptedTurnClosers } from '../../src/session/interrupted-turn-closers.js'
import { baseLog, eventsFrom, headerOf, turnStart } from '../../src/testing/conformance/conformance-events.js'
import { digestOfTexts, type WriterReply } from '../../src/testing/conformance/writer-protocol.js'
import { rejectionOf } from '../helpers/outcomes.js'

/** Streams for one command, and the replies as they arrive. */
function pipes(command: string | undefined): {
  readonly input: PassThrough
  readonly output: PassThrough
  readonly replies: WriterReply[]
} {
  const input = new PassThrough()
  const output = new PassThrough()
  const replies: WriterReply[] = []
  let buffered = ''
  output.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const lines = buffered.split('\n')
    buffered = lines.pop() ?? ''
    for (const line of lines) replies.push(JSON.parse(line) as WriterReply)
  })
  if (command === undefined) input.end()
  else input.write(`${command}\n`)
  return { input, output, replies }
}

describe('serveConformanceWriter', () => {
  test('options without an adapter factory or createHarness are InvalidArgumentError naming them', async () => {
    for (const [options, argument] of [
      [undefined, 'options.adapter'],
      [{ createHarness }, 'options.adapter'],
      [{ adapter: () => memoryPersistence() }, 'options.createHarness'],
      [{ adapter: 5, createHarness }, 'options.adapter'],
    ] as const) {
      const error = await rejectionOf(serveConformanceWriter(options as never))
      expect(InvalidArgumentError.is(error), String(error)).toBe(true)
      expect((error as InvalidArgumentError).argument).toBe(argument)
    }
  })

  test.each([
    ['not JSON', '{"op":'],
    ['an unknown op', JSON.stringify({ op: 'dance', sessionId: 's1', ttlMs: 300, heartbeatMs: 100 })],
    ['no session id', JSON.stringify({ op: 'hold', ttlMs: 300, heartbeatMs: 100, everyMs: 50 })],
    ['a JSON array', '[]'],
  ])('a command line that is %s is InvalidArgumentError, and no adapter is made', async (_, line) => {
    let made = 0
    const { input, output } = pipes(line)
    const error = await rejectionOf(
      serveConformanceWriter({
        adapter: () => {
          made++
          return memoryPersistence()
        },
        createHarness,
        input,
        output,
      }),
    )
    expect(InvalidArgumentError.is(error), String(error)).toBe(true)
    expect((error as InvalidArgumentError).argument).toBe('command')
    expect(made).toBe(0)
  })

  test('an input that ends before a command line is InvalidArgumentError', async () => {
    const { input, output } = pipes(undefined)
    const error = await rejectionOf(
      serveConformanceWriter({ adapter: () => memoryPersistence(), createHarness, input, output }),
    )
    expect(InvalidArgumentError.is(error), String(error)).toBe(true)
    expect((error as InvalidArgumentError).argument).toBe('input')
  })

  test('hold: held, an ack per append with the digest of what is stored, then LeaseLostError once the lease ends', async () => {
    const store = createMemoryStore()
    const command = { op: 'hold', sessionId: 's1', ttlMs: 30_000, heartbeatMs: 10_000, everyMs: 5 }
    const { input, output, replies } = pipes(JSON.stringify(command))
    const leases: unknown[] = []
    const served = serveConformanceWriter({
      adapter: (options) => {
        leases.push(options.lease)
        return memoryPersistence({ store, ...options })
      },
      createHarness,
      input,
      output,
    })
    while (replies.filter((reply) => reply.reply === 'acked').length < 3) await new Promise((r) => setTimeout(r, 5))
    expect(leases).toEqual([{ ttlMs: 30_000, heartbeatMs: 10_000 }])
    expect(store.expireLease('s1')).toBe(true)
    await served
    const held = replies.find((reply) => reply.reply === 'held')
    expect(held).toMatchObject({ reply: 'held', epoch: 1 })
    expect(replies.at(-1)).toMatchObject({ reply: 'error', code: 'LEASE_LOST', name: 'LeaseLostError' })
    const events = (await memoryPersistence({ store }).load('s1')).events
    for (const reply of replies) {
      if (reply.reply !== 'acked') continue
      const texts = events.slice(reply.first, reply.last + 1).map((event) => JSON.stringify(event))
      expect(digestOfTexts(texts)).toBe(reply.digest)
    }
    expect(replies.filter((reply) => reply.reply === 'acked').at(-1)).toMatchObject({ last: events.length - 1 })
  })

  test('resume: a harness opens a session left mid-turn, closes the turn and replies resumed', async () => {
    const store = createMemoryStore()
    const writer = memoryPersistence({ store })
    await writer.create(headerOf('s1'))
    const lease = await writer.acquire('s1')
    await writer.append('s1', [...baseLog(), ...eventsFrom(6, [turnStart(2)])], { expectedSeq: 0, lease })
    await lease.release()
    const { input, output, replies } = pipes(
      JSON.stringify({ op: 'resume', sessionId: 's1', ttlMs: 30_000, heartbeatMs: 10_000 }),
    )
    await serveConformanceWriter({ adapter: () => memoryPersistence({ store }), createHarness, input, output })
    // The closers it appended are acknowledged too.
    expect(replies.filter((reply) => reply.reply !== 'acked')).toEqual([{ reply: 'resumed' }])
    const events = (await writer.load('s1')).events
    expect(events.length).toBeGreaterThan(7)
    expect(interruptedTurnClosers(events)).toEqual([])
  })
})
