import { describe, expect, test } from 'vitest'
import { createInitiator, InitiatorError } from 'yoke'
import { thrownBy } from '../helpers/outcomes.js'

const agent: { readonly id: string } = Object.freeze({ id: 'a' })

function promiseSlots(): number {
  return Object.getOwnPropertySymbols(new Promise<void>(() => {})).length
}

describe('createInitiator().dispose', () => {
  test('releases the storage: a new promise carries no slot for it; current() is undefined from then on', async () => {
    const before = promiseSlots()
    const initiator = createInitiator<typeof agent>()
    const seen: unknown[] = []
    let resume: () => void = () => {}
    const running = initiator.run(agent, async () => {
      seen.push(initiator.current())
      await new Promise<void>((resolve) => {
        resume = resolve
      })
      seen.push(initiator.current())
    })
    initiator.dispose()
    resume()
    await running
    expect(promiseSlots()).toBe(before)
    expect(seen).toEqual([agent, undefined])
    expect(initiator.closed).toBe(true)
  })

  test('after dispose, run throws INITIATOR_CLOSED and runDetached calls its operation without a frame', () => {
    const before = promiseSlots()
    const initiator = createInitiator<typeof agent>()
    initiator.dispose()
    initiator.dispose()
    const error = thrownBy(() => initiator.run(agent, () => 1))
    expect(InitiatorError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'INITIATOR_CLOSED' })
    expect(initiator.runDetached(() => initiator.current() ?? 'none')).toBe('none')
    expect(() => initiator.require()).toThrow(InitiatorError)
    expect(promiseSlots()).toBe(before)
  })

  test('two initiators are independent: disposing one leaves the other working', async () => {
    const first = createInitiator<typeof agent>()
    const second = createInitiator<typeof agent>()
    const other: { readonly id: string } = Object.freeze({ id: 'b' })
    await first.run(agent, async () => undefined)
    first.dispose()
    const seen = await second.run(other, async () => {
      await Promise.resolve()
      return [second.current(), first.current()]
    })
    expect(seen).toEqual([other, undefined])
    second.dispose()
  })
})
