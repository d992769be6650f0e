import { describe, expect, test } from 'vitest'
import { type FakeClock, fakeClock } from 'yoke/testing'
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.js'
import { PersistenceError } from '../../src/errors/persistence-error.js'
import { WriteBehind, type WriteBehindOptions, writeBehindOptionsSchema } from '../../src/persistence/write-behind.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import { logOf, UM } from '../session/builders.js'

/** How the fake writer answers the next write. */
type Answer = 'ok' | 'hold' | Error

/** One call of the fake writer. */
interface Attempt {
  /** The seqs of the batch. */
  readonly seqs: readonly number[]
  /** The texts handed over with the batch. */
  readonly texts: readonly string[]
  /** The clock time the write started at. */
  readonly at: number
  /** Settles a held write successfully. */
  readonly release: () => void
  /** Settles a held write with a failure. */
  readonly fail: (error: unknown) => void
}

/** One `onFailure` report. */
interface Report {
  readonly error: unknown
  readonly pendingEvents: number
  readonly at: number
}

interface Rig {
  readonly clock: FakeClock
  readonly queue: WriteBehind
  readonly attempts: Attempt[]
  readonly reports: Report[]
  /** The answers of the coming writes, in order; once used up, every write answers `fallback`. */
  readonly answers: Answer[]
  fallback: Answer
  /** The seqs of each batch, in write order. */
  batches(): (readonly number[])[]
}

/** A write-behind over a fake clock (starting at `now`) and a scriptable writer. */
function rig(options: Partial<WriteBehindOptions> = {}, now = 0): Rig {
  const clock = fakeClock({ now })
  const attempts: Attempt[] = []
  const reports: Report[] = []
  const state: Rig = {
    clock,
    attempts,
    reports,
    answers: [],
    fallback: 'ok',
    batches: () => attempts.map((attempt) => attempt.seqs),
    queue: new WriteBehind({
      clock,
      options: writeBehindOptionsSchema.parse(options),
      write: (batch, texts) =>
        new Promise<void>((resolve, reject) => {
          attempts.push({
            seqs: batch.map((event) => event.seq),
            texts: [...texts],
            at: clock.now(),
            release: () => resolve(),
            fail: (error) => reject(error),
          })
          const answer = state.answers.shift() ?? state.fallback
          if (answer === 'ok') resolve()
          else if (answer !== 'hold') reject(answer)
        }),
      onFailure: (error, pendingEvents) => reports.push({ error, pendingEvents, at: clock.now() }),
    }),
  }
  return state
}

/** `count` frozen `user/message` events, seqs 0…count−1 (`e0`, `e1`, …). */
function events(count: number): SessionEvent[] {
  return logOf(Array.from({ length: count }, (_, index) => UM(`m${index}`)))
}

function attemptAt(subject: Rig, index: number): Attempt {
  const attempt = subject.attempts[index]
  if (attempt === undefined) throw new Error(`no write #${index}`)
  return attempt
}

/** The reason `promise` rejects with; throws when it fulfils instead. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected the promise to reject')
}

/** What `action` throws; throws when it returns instead. */
function thrownBy(action: () => unknown): unknown {
  try {
    action()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to throw')
}

/** Lets promise continuations run without moving time. */
const settle = (clock: FakeClock): Promise<void> => clock.advance(0)

describe('writeBehindOptionsSchema', () => {
  test('fills the defaults: 200 ms, 10 000 events, 16 MiB', () => {
    expect(writeBehindOptionsSchema.parse({})).toEqual({
      windowMs: 200,
      maxPendingEvents: 10_000,
      maxPendingBytes: 16 * 1024 * 1024,
    })
    expect(writeBehindOptionsSchema.parse({ windowMs: 5 })).toEqual({
      windowMs: 5,
      maxPendingEvents: 10_000,
      maxPendingBytes: 16_777_216,
    })
  })

  test('windowMs is an integer from 1 to 2 147 483 647', () => {
    for (const windowMs of [1, 2_147_483_647]) {
      expect(writeBehindOptionsSchema.safeParse({ windowMs }).success).toBe(true)
    }
    for (const windowMs of [0, -1, 1.5, 2_147_483_648, Number.NaN, Number.POSITIVE_INFINITY, '200', null]) {
      const result = writeBehindOptionsSchema.safeParse({ windowMs })
      expect(result.success, String(windowMs)).toBe(false)
      expect(result.error?.issues[0]?.path).toEqual(['windowMs'])
    }
  })

  test('the high-water marks are positive safe integers', () => {
    for (const key of ['maxPendingEvents', 'maxPendingBytes'] as const) {
      for (const value of [1, Number.MAX_SAFE_INTEGER]) {
        expect(writeBehindOptionsSchema.safeParse({ [key]: value }).success, `${key} ${value}`).toBe(true)
      }
      for (const value of [0, -3, 2.5, 2 ** 53, Number.POSITIVE_INFINITY, '3']) {
        const result = writeBehindOptionsSchema.safeParse({ [key]: value })
        expect(result.success, `${key} ${String(value)}`).toBe(false)
        expect(result.error?.issues[0]?.path).toEqual([key])
      }
    }
  })

  test('is strict: an unknown key or a non-object is refused', () => {
    const unknownKey = writeBehindOptionsSchema.safeParse({ windowMs: 10, window: 10 })
    expect(unknownKey.success).toBe(false)
    expect(unknownKey.error?.issues[0]?.code).toBe('unrecognized_keys')
    for (const value of [null, 200, 'fast', []]) {
      expect(writeBehindOptionsSchema.safeParse(value).success, JSON.stringify(value)).toBe(false)
    }
  })

  test('the constructor refuses out-of-bounds options, naming the option', () => {
    const error = thrownBy(
      () =>
        new WriteBehind({
          clock: fakeClock(),
          options: { windowMs: 0, maxPendingEvents: 1, maxPendingBytes: 1 },
          write: async () => {},
          onFailure: () => {},
        }),
    )
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect((error as InvalidArgumentError).argument).toBe('options.windowMs')
  })
})

describe('WriteBehind windows', () => {
  test('the window opens at the first event and is fixed; the batch takes the whole queue', async () => {
    const subject = rig()
    const [e0, e1] = events(2)
    subject.queue.enqueue(e0!)
    expect(subject.queue.hasWork).toBe(true)
    expect(subject.clock.pending()).toEqual([{ dueAt: 200, delayMs: 200 }])
    await subject.clock.advance(150)
    subject.queue.enqueue(e1!)
    expect(subject.clock.pending()).toEqual([{ dueAt: 200, delayMs: 200 }])
    await subject.clock.advance(49)
    expect(subject.clock.now()).toBe(199)
    expect(subject.attempts).toEqual([])
    await subject.clock.advance(1)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([{ seqs: [0, 1], at: 200 }])
    expect(subject.queue.hasWork).toBe(false)
    expect(subject.queue.pendingEvents).toBe(0)
    expect(subject.queue.pendingBytes).toBe(0)
    expect(subject.clock.pending()).toEqual([])
  })

  test('a window that expires during a write starts the next write as soon as that one settles', async () => {
    const subject = rig()
    const log = events(4)
    await subject.clock.advance(100)
    subject.answers.push('hold')
    subject.queue.enqueue(log[2]!)
    await subject.clock.advance(200)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([{ seqs: [2], at: 300 }])
    await subject.clock.advance(10)
    subject.queue.enqueue(log[3]!)
    expect(subject.clock.pending()).toEqual([{ dueAt: 510, delayMs: 200 }])
    await subject.clock.advance(200)
    expect(subject.clock.now()).toBe(510)
    expect(subject.batches()).toEqual([[2]])
    expect(subject.queue.hasWork).toBe(true)
    await subject.clock.advance(90)
    expect(subject.batches()).toEqual([[2]])
    attemptAt(subject, 0).release()
    await settle(subject.clock)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([
      { seqs: [2], at: 300 },
      { seqs: [3], at: 600 },
    ])
    expect(subject.queue.hasWork).toBe(false)
  })

  test('a window still open when the write settles waits out its own remaining time', async () => {
    const subject = rig()
    const log = events(2)
    subject.answers.push('hold')
    subject.queue.enqueue(log[0]!)
    await subject.clock.advance(200)
    await subject.clock.advance(10)
    subject.queue.enqueue(log[1]!)
    await subject.clock.advance(90)
    attemptAt(subject, 0).release()
    await settle(subject.clock)
    expect(subject.batches()).toEqual([[0]])
    await subject.clock.advance(109)
    expect(subject.batches()).toEqual([[0]])
    await subject.clock.advance(1)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([
      { seqs: [0], at: 200 },
      { seqs: [1], at: 410 },
    ])
  })

  test('events go by reference with their JSON text; size is its UTF-16 length, measured once', async () => {
    const subject = rig()
    const [event] = logOf([UM('é😀 wide')])
    let reads = 0
    const counted = new Proxy(event!, {
      get(target, key, receiver) {
        if (key === 'toJSON') reads++
        return Reflect.get(target, key, receiver)
      },
    })
    let written: readonly SessionEvent[] = []
    const queue = new WriteBehind({
      clock: subject.clock,
      options: writeBehindOptionsSchema.parse({}),
      write: async (batch) => {
        written = batch
      },
      onFailure: () => {},
    })
    const text = JSON.stringify(event)
    queue.enqueue(counted)
    expect(reads).toBe(1)
    expect(queue.pendingBytes).toBe(text.length)
    expect(queue.pendingBytes).not.toBe(Buffer.byteLength(text))
    subject.queue.enqueue(event!)
    await subject.clock.advance(200)
    expect(reads).toBe(1)
    expect(written[0]).toBe(counted)
    expect(attemptAt(subject, 0).texts).toEqual([text])
  })
})

describe('WriteBehind passes the measured texts on', () => {
  test('each batch is frozen and carries the texts measured at enqueue, marked storable when every event is frozen', async () => {
    const seen: { frozen: boolean; texts: readonly string[]; eventsFrozen: boolean }[] = []
    const queue = new WriteBehind({
      clock: fakeClock({ now: 0 }),
      options: writeBehindOptionsSchema.parse({}),
      write: async (batch, texts, eventsFrozen) => {
        seen.push({ frozen: Object.isFrozen(batch), texts, eventsFrozen })
      },
      onFailure: () => {},
    })
    const log = events(3)
    for (const event of log) queue.enqueue(event)
    await queue.flush()
    expect(seen).toEqual([{ frozen: true, texts: log.map((event) => JSON.stringify(event)), eventsFrozen: true }])
    // An event that is not frozen (never a committed one) keeps its batch's texts from being stored as they are.
    seen.length = 0
    const open = { type: 'test/note', seq: 3, time: 0, data: { open: true } } as SessionEvent
    queue.enqueue(open)
    await queue.flush()
    expect(seen).toEqual([{ frozen: true, texts: [JSON.stringify(open)], eventsFrozen: false }])
    queue.dispose()
  })
})

describe('WriteBehind flush', () => {
  test('concurrent flushes share one promise; an event queued meanwhile is written next; no timer remains', async () => {
    const subject = rig()
    const [e0, e1] = events(2)
    subject.answers.push('hold')
    subject.queue.enqueue(e0!)
    const first = subject.queue.flush()
    const second = subject.queue.flush()
    expect(second).toBe(first)
    expect(subject.batches()).toEqual([[0]])
    expect(subject.clock.pending()).toEqual([])
    subject.queue.enqueue(e1!)
    expect(subject.clock.pending()).toEqual([])
    attemptAt(subject, 0).release()
    await first
    expect(subject.batches()).toEqual([[0], [1]])
    expect(subject.clock.pending()).toEqual([])
    expect(subject.queue.hasWork).toBe(false)
  })

  test('empty and idle: resolves with no write and no timer; the next enqueue opens a normal window', async () => {
    const subject = rig()
    await subject.queue.flush()
    expect(subject.attempts).toEqual([])
    expect(subject.clock.pending()).toEqual([])
    await subject.clock.advance(50)
    subject.queue.enqueue(events(1)[0]!)
    expect(subject.clock.pending()).toEqual([{ dueAt: 250, delayMs: 200 }])
    await subject.clock.advance(200)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([{ seqs: [0], at: 250 }])
  })

  test('a flush awaits the write in flight, then writes what came meanwhile, at once', async () => {
    const subject = rig()
    const [e0, e1] = events(2)
    subject.answers.push('hold')
    subject.queue.enqueue(e0!)
    await subject.clock.advance(200)
    subject.queue.enqueue(e1!)
    let done = false
    const barrier = subject.queue.flush().then(() => {
      done = true
    })
    await subject.clock.advance(20)
    expect(done).toBe(false)
    expect(subject.batches()).toEqual([[0]])
    attemptAt(subject, 0).release()
    await barrier
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([
      { seqs: [0], at: 200 },
      { seqs: [1], at: 220 },
    ])
    expect(subject.clock.pending()).toEqual([])
  })

  test('a flush ignores the outcome of the write in flight and retries its batch at once', async () => {
    const subject = rig()
    const [e0, e1] = events(2)
    const failure = new Error('disk full')
    subject.answers.push('hold')
    subject.queue.enqueue(e0!)
    await subject.clock.advance(200)
    const barrier = subject.queue.flush()
    subject.queue.enqueue(e1!)
    attemptAt(subject, 0).fail(failure)
    await barrier
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([
      { seqs: [0], at: 200 },
      { seqs: [0, 1], at: 200 },
    ])
    // The failed write was an automatic one: it is reported once, the flush itself succeeded.
    expect(subject.reports.map(({ error, pendingEvents }) => ({ error, pendingEvents }))).toEqual([
      { error: failure, pendingEvents: 2 },
    ])
    expect(subject.queue.paused).toBe(false)
    expect(subject.queue.hasWork).toBe(false)
    expect(subject.queue.lastError).toBeUndefined()
  })

  test('a failed flush rejects with the error, reports nothing, keeps the batch; a later event waits a full window', async () => {
    const subject = rig()
    const [e0, e1] = events(2)
    const failure = new Error('io')
    subject.answers.push(failure)
    subject.queue.enqueue(e0!)
    expect(await rejectionOf(subject.queue.flush())).toBe(failure)
    expect(subject.reports).toEqual([])
    expect(subject.queue.pendingEvents).toBe(1)
    expect(subject.queue.paused).toBe(true)
    expect(subject.queue.hasWork).toBe(true)
    expect(subject.queue.lastError).toBe(failure)
    expect(subject.clock.pending()).toEqual([])
    await subject.clock.advance(1_000)
    expect(subject.batches()).toEqual([[0]])
    subject.queue.enqueue(e1!)
    expect(subject.queue.paused).toBe(false)
    await subject.clock.advance(199)
    expect(subject.batches()).toEqual([[0]])
    await subject.clock.advance(1)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([
      { seqs: [0], at: 0 },
      { seqs: [0, 1], at: 1_200 },
    ])
    expect(subject.queue.hasWork).toBe(false)
  })

  test('a flush failing on a later batch keeps the events queued meanwhile behind the failed batch', async () => {
    const subject = rig()
    const log = events(3)
    const failure = new Error('second write')
    subject.answers.push('hold', 'hold')
    subject.queue.enqueue(log[0]!)
    const barrier = subject.queue.flush()
    subject.queue.enqueue(log[1]!)
    attemptAt(subject, 0).release()
    await settle(subject.clock)
    expect(subject.batches()).toEqual([[0], [1]])
    subject.queue.enqueue(log[2]!)
    attemptAt(subject, 1).fail(failure)
    expect(await rejectionOf(barrier)).toBe(failure)
    expect(subject.reports).toEqual([])
    expect(subject.queue.pendingEvents).toBe(2)
    expect(subject.queue.paused).toBe(true)
    expect(subject.clock.pending()).toEqual([])
    await subject.queue.flush()
    expect(subject.batches()).toEqual([[0], [1], [1, 2]])
  })
})

describe('WriteBehind failures', () => {
  test('one report, paused with no timer; the next event opens a fresh full window for the retry', async () => {
    // The clock starts at −200 so the first (failing) write happens at t 0.
    const subject = rig({}, -200)
    const [e0, e1] = events(2)
    const failure = new Error('refused')
    subject.answers.push(failure)
    subject.queue.enqueue(e0!)
    await subject.clock.advance(200)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([{ seqs: [0], at: 0 }])
    expect(subject.reports).toEqual([{ error: failure, pendingEvents: 1, at: 0 }])
    expect(subject.queue.hasWork).toBe(true)
    expect(subject.queue.paused).toBe(true)
    expect(subject.clock.pending()).toEqual([])
    await subject.clock.advance(1_000)
    expect(subject.batches()).toEqual([[0]])
    expect(subject.reports).toHaveLength(1)
    subject.queue.enqueue(e1!)
    expect(subject.queue.paused).toBe(false)
    expect(subject.clock.pending()).toEqual([{ dueAt: 1_200, delayMs: 200 }])
    await subject.clock.advance(199)
    expect(subject.batches()).toEqual([[0]])
    await subject.clock.advance(1)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([
      { seqs: [0], at: 0 },
      { seqs: [0, 1], at: 1_200 },
    ])
    expect(subject.queue.hasWork).toBe(false)
    expect(subject.queue.lastError).toBeUndefined()
  })

  test('a failure puts the batch back before the events queued during the write and cancels their window', async () => {
    const subject = rig()
    const log = events(3)
    subject.answers.push('hold')
    subject.queue.enqueue(log[0]!)
    subject.queue.enqueue(log[1]!)
    await subject.clock.advance(200)
    subject.queue.enqueue(log[2]!)
    const bytesOfE2 = subject.queue.pendingBytes
    expect(subject.clock.pending()).toEqual([{ dueAt: 400, delayMs: 200 }])
    attemptAt(subject, 0).fail(new Error('x'))
    await settle(subject.clock)
    expect(subject.clock.pending()).toEqual([])
    expect(subject.queue.pendingEvents).toBe(3)
    expect(subject.queue.pendingBytes).toBe(log.reduce((sum, event) => sum + JSON.stringify(event).length, 0))
    expect(subject.queue.pendingBytes).toBeGreaterThan(bytesOfE2)
    expect(subject.reports.map((report) => report.pendingEvents)).toEqual([3])
    await subject.clock.advance(5_000)
    expect(subject.batches()).toEqual([[0, 1]])
    await subject.queue.flush()
    expect(subject.batches()).toEqual([
      [0, 1],
      [0, 1, 2],
    ])
    expect(attemptAt(subject, 1).texts).toEqual(log.map((event) => JSON.stringify(event)))
  })

  test('an explicit flush while paused retries at once', async () => {
    const subject = rig()
    subject.answers.push(new Error('once'))
    subject.queue.enqueue(events(1)[0]!)
    await subject.clock.advance(200)
    expect(subject.queue.paused).toBe(true)
    await subject.clock.advance(30)
    await subject.queue.flush()
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([
      { seqs: [0], at: 200 },
      { seqs: [0], at: 230 },
    ])
    expect(subject.queue.paused).toBe(false)
    expect(subject.reports).toHaveLength(1)
  })

  test('a writer that throws synchronously and a throwing onFailure are contained', async () => {
    const clock = fakeClock()
    const failure = new Error('sync')
    let calls = 0
    const queue = new WriteBehind({
      clock,
      options: writeBehindOptionsSchema.parse({}),
      write: () => {
        calls++
        throw failure
      },
      onFailure: () => {
        throw new Error('report failed')
      },
    })
    queue.enqueue(events(1)[0]!)
    await clock.advance(200)
    expect(calls).toBe(1)
    expect(queue.paused).toBe(true)
    expect(queue.lastError).toBe(failure)
    expect(await rejectionOf(queue.flush())).toBe(failure)
    expect(calls).toBe(2)
  })
})

describe('WriteBehind high-water and back-pressure', () => {
  test('the third event at maxPendingEvents 3 writes at once, ignoring the window', async () => {
    const subject = rig({ maxPendingEvents: 3 })
    const log = events(3)
    subject.queue.enqueue(log[0]!)
    subject.queue.enqueue(log[1]!)
    await subject.clock.advance(10)
    expect(subject.attempts).toEqual([])
    subject.queue.enqueue(log[2]!)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([{ seqs: [0, 1, 2], at: 10 }])
    expect(subject.clock.pending()).toEqual([])
    await subject.clock.advance(500)
    expect(subject.batches()).toEqual([[0, 1, 2]])
  })

  test('the byte high-water mark writes at once too', async () => {
    const log = events(2)
    const sizes = log.map((event) => JSON.stringify(event).length)
    const subject = rig({ maxPendingBytes: sizes[0]! + sizes[1]! })
    subject.queue.enqueue(log[0]!)
    expect(subject.queue.pendingBytes).toBe(sizes[0])
    expect(subject.attempts).toEqual([])
    subject.queue.enqueue(log[1]!)
    expect(subject.batches()).toEqual([[0, 1]])
  })

  test('high-water reached during a write: the next write starts right after it, not at the window end', async () => {
    const subject = rig({ maxPendingEvents: 2 })
    const log = events(4)
    subject.answers.push('hold')
    subject.queue.enqueue(log[0]!)
    subject.queue.enqueue(log[1]!)
    await subject.clock.advance(5)
    subject.queue.enqueue(log[2]!)
    subject.queue.enqueue(log[3]!)
    expect(subject.batches()).toEqual([[0, 1]])
    expect(subject.queue.pendingEvents).toBe(2)
    // At the mark, but no write failed: no back-pressure.
    expect(subject.queue.backpressured).toBe(false)
    await subject.clock.advance(15)
    attemptAt(subject, 0).release()
    await settle(subject.clock)
    expect(subject.attempts.map(({ seqs, at }) => ({ seqs, at }))).toEqual([
      { seqs: [0, 1], at: 0 },
      { seqs: [2, 3], at: 20 },
    ])
    expect(subject.clock.pending()).toEqual([])
  })

  test('back-pressure: set after a failed forced write at the high-water mark, cleared by the next successful write', async () => {
    const subject = rig({ maxPendingEvents: 3 })
    const log = events(4)
    const failure = new Error('down')
    subject.fallback = failure
    subject.queue.enqueue(log[0]!)
    subject.queue.enqueue(log[1]!)
    expect(subject.queue.backpressured).toBe(false)
    subject.queue.enqueue(log[2]!)
    expect(subject.queue.backpressured).toBe(false)
    await settle(subject.clock)
    expect(subject.batches()).toEqual([[0, 1, 2]])
    expect(subject.queue.backpressured).toBe(true)
    expect(subject.queue.pendingEvents).toBe(3)
    expect(subject.queue.lastError).toBe(failure)
    expect(subject.reports.map((report) => report.pendingEvents)).toEqual([3])
    expect(subject.clock.pending()).toEqual([])
    await subject.clock.advance(1_000)
    expect(subject.batches()).toHaveLength(1)
    expect(await rejectionOf(subject.queue.flush())).toBe(failure)
    expect(subject.queue.backpressured).toBe(true)
    subject.fallback = 'ok'
    await subject.queue.flush()
    expect(subject.queue.backpressured).toBe(false)
    expect(subject.queue.lastError).toBeUndefined()
    expect(subject.batches()).toEqual([
      [0, 1, 2],
      [0, 1, 2],
      [0, 1, 2],
    ])
    subject.queue.enqueue(log[3]!)
    expect(subject.queue.backpressured).toBe(false)
  })

  test('a failed write below the high-water mark is no back-pressure', async () => {
    const subject = rig({ maxPendingEvents: 3 })
    const log = events(2)
    subject.fallback = new Error('down')
    subject.queue.enqueue(log[0]!)
    subject.queue.enqueue(log[1]!)
    await subject.clock.advance(200)
    expect(subject.queue.paused).toBe(true)
    expect(subject.queue.pendingEvents).toBe(2)
    expect(subject.queue.backpressured).toBe(false)
  })
})

describe('WriteBehind dispose', () => {
  test('cancels the window; nothing is written afterwards; enqueue and a flush with events left refuse', async () => {
    const subject = rig()
    const log = events(2)
    subject.queue.enqueue(log[0]!)
    subject.queue.dispose()
    subject.queue.dispose()
    expect(subject.clock.pending()).toEqual([])
    await subject.clock.advance(1_000)
    expect(subject.attempts).toEqual([])
    const refused = thrownBy(() => subject.queue.enqueue(log[1]!))
    expect(PersistenceError.is(refused) && refused.code).toBe('CLOSED')
    const rejected = await rejectionOf(subject.queue.flush())
    expect(PersistenceError.is(rejected) && rejected.code).toBe('CLOSED')
    expect(subject.attempts).toEqual([])
  })

  test('a write in flight at dispose still settles, unreported, and starts nothing more', async () => {
    const subject = rig({ maxPendingEvents: 2 })
    const log = events(4)
    subject.answers.push('hold', 'hold')
    subject.queue.enqueue(log[0]!)
    subject.queue.enqueue(log[1]!)
    subject.queue.enqueue(log[2]!)
    subject.queue.enqueue(log[3]!)
    subject.queue.dispose()
    attemptAt(subject, 0).fail(new Error('late'))
    await subject.clock.advance(1_000)
    expect(subject.batches()).toEqual([[0, 1]])
    expect(subject.reports).toEqual([])
    expect(subject.queue.hasWork).toBe(true)
  })

  test('an idle disposed queue flushes to nothing', async () => {
    const subject = rig()
    subject.queue.enqueue(events(1)[0]!)
    await subject.queue.flush()
    subject.queue.dispose()
    await expect(subject.queue.flush()).resolves.toBeUndefined()
    expect(subject.batches()).toEqual([[0]])
  })
})
