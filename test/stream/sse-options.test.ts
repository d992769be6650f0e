/** `sseResponse` in process: frames, headers, a failed run, and option checks. */
import { afterEach, describe, expect, test } from 'vitest'
import { createHarness, type Harness, InvalidArgumentError, sseResponse } from 'yoke'
import { hang, scriptedModel, text } from 'yoke/testing'
import { thrownBy } from '../helpers/outcomes.js'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

async function bodyText(response: Response): Promise<string> {
  return new Response(response.body).text()
}

describe('sseResponse', () => {
  test('frames each event as id, event and data lines, after a retry line; SSE headers set, extra headers kept', async () => {
    harness = await createHarness({ model: scriptedModel([text('hi')]) })
    const agent = await harness.createAgent()
    const response = sseResponse(agent.stream('hello'), {
      retryMs: 1500,
      heartbeatMs: 0,
      headers: { 'x-request-id': 'r-1', 'cache-control': 'max-age=60' },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(response.headers.get('x-request-id')).toBe('r-1')
    const body = await bodyText(response)
    const frames = body.split('\n\n').filter((frame) => frame !== '')
    expect(frames[0]).toBe('retry: 1500')
    const turn = agent.session.events.slice(agent.session.events.findIndex((event) => event.type === 'turn/start'))
    expect(frames.slice(1)).toEqual(
      turn.map((event) => `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}`),
    )
  })

  test('a run that no turn claims ends with an event: error frame carrying its code, and no id', async () => {
    harness = await createHarness({ model: scriptedModel([hang()]) })
    const agent = await harness.createAgent()
    agent.followup('first, hanging')
    const response = sseResponse(agent.stream('second, queued'), { heartbeatMs: 0 })
    agent.cancel()
    const body = await bodyText(response)
    expect(body).toMatch(/^event: error\ndata: \{"code":"RUN_DISCARDED","message":".+"\}\n\n$/)
  })

  test.each([
    [{ heartbeatMs: -1 }, 'options.heartbeatMs'],
    [{ heartbeatMs: 1.5 }, 'options.heartbeatMs'],
    [{ maxLag: 0 }, 'options.maxLag'],
    [{ maxLag: Number.POSITIVE_INFINITY }, 'options.maxLag'],
    [{ retryMs: -5 }, 'options.retryMs'],
    [{ from: -1 }, 'options.from'],
  ])('option %j is refused naming %s', async (options, argument) => {
    harness = await createHarness({ model: scriptedModel([]) })
    const agent = await harness.createAgent()
    const error = thrownBy(() => sseResponse(agent, options))
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ argument })
  })

  test('a source that is neither a run nor an agent is refused before anything is streamed', async () => {
    harness = await createHarness({ model: scriptedModel([text('hi')]) })
    const agent = await harness.createAgent()
    expect(thrownBy(() => sseResponse({} as never))).toMatchObject({ argument: 'source' })
    expect(thrownBy(() => sseResponse(agent.session as never))).toMatchObject({ argument: 'source' })
    const run = agent.stream('hi')
    expect(sseResponse(run).headers.get('content-type')).toContain('text/event-stream')
    await run.result
  })
})
