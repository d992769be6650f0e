import { describe, expect, test } from 'vitest'
import type { ToolResult } from 'yoke'
import { call, text } from 'yoke/testing'
import { eventsOf, loopWorld, rawTool, requestToolResults } from './loop-helpers.js'

type Body = () => unknown

/** Runs one call of a tool whose body is `body`, with a recording middleware on each tool event. */
async function recordOrder(body: Body): Promise<{ order: string[]; fromNext: unknown[]; sent: string[] }> {
  const order: string[] = []
  const fromNext: unknown[] = []
  const world = await loopWorld([call('c1', 'probe', '{}'), text('done')], {
    tools: [
      rawTool('probe', {
        execute: () => {
          order.push('body')
          return body() as never
        },
      }),
    ],
  })
  const { agent, model } = world
  agent.ctx.on('tools/pre-execute', () => {
    order.push('pre')
    return undefined
  })
  agent.ctx.on('tools/execute', async (_payload, next) => {
    order.push('execute (before)')
    let inner: unknown
    try {
      inner = await next()
    } catch (error) {
      order.push('execute (next rejected)')
      throw error
    }
    fromNext.push(inner)
    order.push('execute (after)')
    return inner as ToolResult
  })
  agent.ctx.on('tools/post-execute', async (_payload, next) => {
    order.push('post')
    return next()
  })
  expect((await agent.run('go')).reason).toEqual({ kind: 'completed' })
  expect(eventsOf(agent, 'tool/result')).toHaveLength(1)
  return { order, fromNext, sent: requestToolResults(model.requests[1]) }
}

const fullOrder = ['pre', 'execute (before)', 'body', 'execute (after)', 'post']

describe('tools/execute middleware around a body, whatever the body does', () => {
  test('a returning body: pre, execute before, body, execute after, post', async () => {
    const { order, fromNext, sent } = await recordOrder(() => 'fine')
    expect(order).toEqual(fullOrder)
    expect(fromNext).toMatchObject([{ isError: false, content: [{ type: 'text', text: 'fine' }] }])
    expect(sent).toEqual(['c1: fine'])
  })

  test('a throwing body: next() resolves with the TOOL_FAILED result and the code after it runs', async () => {
    const { order, fromNext, sent } = await recordOrder(() => {
      throw new Error('disk on fire')
    })
    expect(order).toEqual(fullOrder)
    expect(fromNext).toMatchObject([{ isError: true, error: { code: 'TOOL_FAILED', message: 'disk on fire' } }])
    expect(sent).toEqual(['c1 error: Tool error (TOOL_FAILED): disk on fire'])
  })

  test('an async body that rejects behaves the same', async () => {
    const { order, fromNext } = await recordOrder(async () => {
      await Promise.resolve()
      throw new TypeError('late failure')
    })
    expect(order).toEqual(fullOrder)
    expect(fromNext).toMatchObject([{ isError: true, error: { code: 'TOOL_FAILED', message: 'late failure' } }])
  })

  test('a body returning a value that is not JSON: next() resolves with the TOOL_FAILED result', async () => {
    const { order, fromNext, sent } = await recordOrder(() => ({ when: new Date(0) }))
    expect(order).toEqual(fullOrder)
    expect(fromNext).toMatchObject([{ isError: true, error: { code: 'TOOL_FAILED' } }])
    expect(sent[0]).toMatch(/^c1 error: Tool error \(TOOL_FAILED\): "probe" returned/)
  })
})
