/**
 * A loop listener that throws a hostile value (a proxy whose traps throw, so neither `instanceof`
 * nor a property read works) ends the turn `error` with `(unprintable thrown value)` `UNKNOWN`:
 * the status never strands, and the next prompt runs.
 */
import { describe, expect, test } from 'vitest'
import { HarnessError } from 'yoke'
import { text } from 'yoke/testing'
import { adapterKinds, dataOf, useScenarios } from './scenario-harness.js'

const hostile = (): unknown =>
  new Proxy(
    {},
    {
      get() {
        throw new Error('get trap')
      },
      getPrototypeOf() {
        throw new Error('getPrototypeOf trap')
      },
    },
  )

describe.each(adapterKinds)('hostile thrown values (%s adapter)', (kind) => {
  const scenarios = useScenarios(kind)

  test.each(['agent/pre-step', 'agent/request', 'agent/turn-stopping'] as const)(
    'a %s listener throwing a hostile proxy ends the turn error UNKNOWN; the agent goes on',
    async (event) => {
      const { harness, agent } = await scenarios.agent({ script: [text('a'), text('b')] })
      let thrown = 0
      const on = (
        harness.on as (name: string, listener: (payload: unknown, next?: () => unknown) => unknown) => unknown
      ).bind(harness)
      on(event, (_payload, next) => {
        if (thrown++ === 0) throw hostile()
        return next?.()
      })
      agent.followup('x')
      await agent.whenIdle()
      expect(agent.status).toBe('idle')
      expect(dataOf(agent.session.events, 'turn/end')[0]).toEqual({
        turn: 1,
        reason: { kind: 'error', error: { message: '(unprintable thrown value)', code: 'UNKNOWN' } },
      })
      agent.followup('again')
      await agent.whenIdle()
      expect(
        dataOf(agent.session.events, 'turn/end').map((data) => (data as { reason: { kind: string } }).reason.kind),
      ).toEqual(['error', 'completed'])
    },
  )
})

test('HarnessError.is() of a hostile proxy is false, never a throw', () => {
  expect(HarnessError.is(hostile())).toBe(false)
})
