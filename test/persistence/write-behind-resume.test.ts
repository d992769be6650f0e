/**
 * `WriteBehind.resume()`: the owner of a queue paused by a failed write (a storage call that timed
 * out and later answered) retries it at once, without waiting for the next event or flush.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { fakeClock } from 'yoke/testing'
import { WriteBehind, writeBehindOptionsSchema } from '../../src/persistence/write-behind.js'
import type { SessionEvent } from '../../src/session/session-event.js'
import { logOf, UM } from '../session/builders.js'

function events(count: number): SessionEvent[] {
  return logOf(Array.from({ length: count }, (_, index) => UM(`m${index}`)))
}

/** A queue whose writes fail while `down` is set; held writes wait for `release`. */
function rig() {
  const clock = fakeClock({ now: 0 })
  const state = { down: true, hold: false }
  const batches: number[][] = []
  const reports: unknown[] = []
  let release: () => void = () => {}
  const queue = new WriteBehind({
    clock,
    options: writeBehindOptionsSchema.parse({ windowMs: 10 }),
    write: (batch) => {
      batches.push(batch.map((event) => event.seq))
      if (state.hold) {
        return new Promise<void>((resolve) => {
          release = resolve
        })
      }
      return state.down ? Promise.reject(new Error('down')) : Promise.resolve()
    },
    onFailure: (error) => reports.push(error),
  })
  return { clock, state, batches, reports, queue, release: () => release() }
}

describe('WriteBehind.resume', () => {
  test('a paused queue writes at once, with no window and no new event', async () => {
    const { clock, state, batches, reports, queue } = rig()
    for (const event of events(3)) queue.enqueue(event)
    await clock.advance(10)
    expect(batches).toEqual([[0, 1, 2]])
    expect(queue.paused).toBe(true)
    expect(reports).toHaveLength(1)
    state.down = false
    queue.resume()
    await clock.advance(0)
    expect(batches).toEqual([
      [0, 1, 2],
      [0, 1, 2],
    ])
    expect(queue.paused).toBe(false)
    expect(queue.hasWork).toBe(false)
  })

  test('a failed resumed write is reported like an automatic one and pauses again', async () => {
    const { clock, batches, reports, queue } = rig()
    for (const event of events(2)) queue.enqueue(event)
    await clock.advance(10)
    queue.resume()
    await clock.advance(0)
    expect(batches).toHaveLength(2)
    expect(reports).toHaveLength(2)
    expect(queue.paused).toBe(true)
    expect(queue.pendingEvents).toBe(2)
  })

  test('does nothing when not paused, when empty, with a write in flight, or after dispose', async () => {
    const { clock, state, batches, queue, release } = rig()
    queue.resume()
    expect(batches).toEqual([])
    state.down = false
    state.hold = true
    for (const event of events(1)) queue.enqueue(event)
    await clock.advance(10)
    expect(batches).toEqual([[0]])
    queue.resume()
    expect(batches).toEqual([[0]])
    release()
    await clock.advance(0)
    state.hold = false
    state.down = true
    for (const event of events(2).slice(1)) queue.enqueue(event)
    await clock.advance(10)
    expect(queue.paused).toBe(true)
    queue.dispose()
    queue.resume()
    await clock.advance(0)
    expect(batches).toEqual([[0], [1]])
  })
})
