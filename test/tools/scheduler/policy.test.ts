/**
 * The pre-execute phase: `tool/call` first,
 * unknown tools, argument parsing and validation, `tools/pre-execute` decisions and throws,
 * approval, guards and the checkpoint.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  defineTool,
  services,
  type ToolContext,
  type ToolRegistry,
  ToolTimeoutError,
  toolResult,
  UnknownToolError,
} from 'yoke'
import type { ToolCallInfo } from '../../../src/tools/index.js'
import { block, resultData, resultText, schedulerWorld, tool, toolLog } from './scheduler-helpers.js'

describe('denial and policy throw', () => {
  test('only the allowed call runs; post-execute sees all three in model order', async () => {
    const world = await schedulerWorld()
    const ran: string[] = []
    world.tools.register(tool('t', { execute: (_args, context) => void ran.push(context.callId) }))
    world.ctx.on('tools/pre-execute', ({ call }) => {
      if (call.callId === 'c2') return { kind: 'deny', reason: 'blocked by policy' }
      if (call.callId === 'c3') throw new Error('pre exploded')
      return undefined
    })
    const postExecuted: string[] = []
    world.ctx.on('tools/post-execute', async ({ call }, next) => {
      postExecuted.push(call.callId)
      return next()
    })
    const report = await world.run([block('c1', 't'), block('c2', 't'), block('c3', 't')])
    expect(report).toEqual({ outcome: 'owed' })
    expect(ran).toEqual(['c1'])
    expect(postExecuted).toEqual(['c1', 'c2', 'c3'])
    expect(resultText(world.session, 'c2')).toBe('Tool error (TOOL_DENIED): blocked by policy')
    expect(resultText(world.session, 'c3')).toBe(
      'Tool error (TOOL_DENIED): a policy check for "t" failed: pre exploded',
    )
    expect(resultData(world.session, 'c2').error).toEqual({ name: 'ToolDeniedError', code: 'TOOL_DENIED' })
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2 TOOL_DENIED',
      'tool/call c3',
      'tool/result c3 TOOL_DENIED',
    ])
  })

  test.each([
    ['a deny without a reason', { kind: 'deny' }, '"t" was denied by policy'],
    [
      'an unknown kind',
      { kind: 'maybe' },
      'a policy check for "t" failed: tools/pre-execute returned an invalid decision',
    ],
    [
      'an extra key',
      { kind: 'allow', args: {} },
      'a policy check for "t" failed: tools/pre-execute returned an invalid decision',
    ],
    [
      'a non-string reason',
      { kind: 'deny', reason: 7 },
      'a policy check for "t" failed: tools/pre-execute returned an invalid decision',
    ],
  ])('%s denies with the policy-failure text', async (_label, decision, message) => {
    const world = await schedulerWorld()
    let ran = false
    world.tools.register(tool('t', { execute: () => void (ran = true) }))
    world.ctx.on('tools/pre-execute', () => decision as never)
    await world.run([block('c1', 't')])
    expect(ran).toBe(false)
    expect(resultText(world.session, 'c1')).toBe(`Tool error (TOOL_DENIED): ${message}`)
  })

  test('tool/call is logged before pre-execute runs, and the call a listener sees is frozen with parsed args', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t'))
    const seen: { logged: string[]; call: ToolCallInfo }[] = []
    world.ctx.on('tools/pre-execute', ({ call }) => {
      seen.push({ logged: toolLog(world.session), call })
      return undefined
    })
    await world.run([block('c1', 't', '{"a":1}')])
    expect(seen[0]?.logged).toEqual(['tool/call c1'])
    const call = seen[0]?.call as ToolCallInfo
    expect(Object.isFrozen(call)).toBe(true)
    expect(call).toMatchObject({ callId: 'c1', name: 't', arguments: '{"a":1}', args: { a: 1 }, turn: 1, step: 1 })
    expect(call.agent).toBe(world.agent)
    expect(call.signal).toBe(world.turn.signal)
  })
})

describe('malformed arguments', () => {
  test("'not json' is recorded verbatim and answered INVALID_ARGUMENTS; '' runs with {}; '[1]' is INVALID_ARGUMENTS", async () => {
    const world = await schedulerWorld()
    const received: unknown[] = []
    world.tools.register(tool('t', { execute: (args) => void received.push(args) }))
    await world.run([block('c1', 't', 'not json'), block('c2', 't', ''), block('c3', 't', '[1]')])
    const call = world.session.events.find((event) => event.type === 'tool/call')
    expect(call?.data).toEqual({ turn: 1, step: 1, callId: 'c1', name: 't', arguments: 'not json' })
    expect(resultText(world.session, 'c1')).toBe(
      'Tool error (INVALID_ARGUMENTS): arguments for "t" are not a valid JSON object',
    )
    expect(resultData(world.session, 'c1').error).toEqual({ name: 'ToolArgumentsError', code: 'INVALID_ARGUMENTS' })
    expect(received).toEqual([{}])
    expect(resultText(world.session, 'c3')).toBe(
      'Tool error (INVALID_ARGUMENTS): arguments for "t" are not a valid JSON object',
    )
  })
})

describe('unknown and throwing', () => {
  test('an unknown tool gets UNKNOWN_TOOL and no policy runs for it', async () => {
    const world = await schedulerWorld()
    let policies = 0
    world.ctx.on('tools/pre-execute', () => {
      policies++
      return undefined
    })
    world.tools.guard(() => {
      policies++
      return undefined
    })
    await world.run([block('c1', 'nope')])
    expect(policies).toBe(0)
    expect(resultText(world.session, 'c1')).toBe('Tool error (UNKNOWN_TOOL): no tool named "nope" is available')
    expect(resultData(world.session, 'c1').error).toEqual({ name: UnknownToolError.brand, code: 'UNKNOWN_TOOL' })
    expect(resultData(world.session, 'c1').message.content[0].isError).toBe(true)
  })

  test('a tool registered in another agent scope is unknown here', async () => {
    const world = await schedulerWorld()
    const other = world.harness.ctx.child('other', { scope: { agent: 'B' } })
    ;(other.get(services.tools) as ToolRegistry).register(tool('capture'))
    await world.run([block('c1', 'capture')])
    expect(resultText(world.session, 'c1')).toBe('Tool error (UNKNOWN_TOOL): no tool named "capture" is available')
  })

  const hostile = new Proxy(
    {},
    {
      get() {
        throw new Error('trap')
      },
      getPrototypeOf() {
        throw new Error('trap')
      },
    },
  )
  test.each([
    ['an Error', new Error('exploded'), 'exploded'],
    ['a string', 'plain string', 'plain string'],
    ['a hostile Proxy', hostile, '(unprintable thrown value)'],
    ['a HarnessError', new ToolTimeoutError({ toolName: 'x', message: 'harness message' }), 'harness message'],
  ])('a body throwing %s gives TOOL_FAILED with its message, and the step goes on', async (_label, thrown, message) => {
    const world = await schedulerWorld()
    world.tools.register([
      tool('t', {
        execute: () => {
          throw thrown
        },
      }),
      tool('after'),
    ])
    const report = await world.run([block('c1', 't'), block('c2', 'after')])
    expect(report).toEqual({ outcome: 'owed' })
    expect(resultText(world.session, 'c1')).toBe(`Tool error (TOOL_FAILED): ${message}`)
    expect(resultData(world.session, 'c1').error).toEqual({ name: 'ToolFailedError', code: 'TOOL_FAILED' })
    expect(resultText(world.session, 'c2')).toBe('after')
  })

  test("a tool's own isError result keeps its content and gets error TOOL_FAILED", async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: () => toolResult({ content: 'file not found', isError: true }) }))
    await world.run([block('c1', 't')])
    expect(resultText(world.session, 'c1')).toBe('file not found')
    expect(resultData(world.session, 'c1').error).toEqual({ name: 'ToolFailedError', code: 'TOOL_FAILED' })
  })

  test('an invalid return value becomes TOOL_FAILED naming the field', async () => {
    const world = await schedulerWorld()
    world.tools.register([
      tool('read', { execute: () => toolResult({ content: 'x', meta: [] as never }) }),
      tool('rows', { execute: () => ({ rows: [{ when: new Date(0) }] }) }),
    ])
    await world.run([block('c1', 'read'), block('c2', 'rows')])
    expect(resultText(world.session, 'c1')).toBe(
      'Tool error (TOOL_FAILED): invalid result: meta is not a plain JSON object',
    )
    expect(resultText(world.session, 'c2')).toBe(
      'Tool error (TOOL_FAILED): "rows" returned a value that is not JSON: rows[0].when is a Date instance, not a plain object',
    )
  })
})

describe('invalid arguments', () => {
  test('a zod tool rejects {} naming the path; valid arguments reach the body parsed; raw JSON Schema is not validated', async () => {
    const world = await schedulerWorld()
    const received: unknown[] = []
    world.tools.register([
      defineTool({
        name: 'read',
        description: 'Read a file',
        input: z.object({ path: z.string(), limit: z.number().default(10) }),
        execute: (args) => void received.push(args),
      }),
      defineTool({
        name: 'raw',
        description: 'Raw schema',
        input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        execute: (args) => void received.push(args),
      }),
    ])
    await world.run([block('c1', 'read', '{}'), block('c2', 'read', '{"path":"a"}'), block('c3', 'raw', '{}')])
    const text = resultText(world.session, 'c1')
    expect(
      text.startsWith('Tool error (INVALID_ARGUMENTS): arguments for "read" do not match its input schema: path:'),
    ).toBe(true)
    expect(received).toEqual([{ path: 'a', limit: 10 }, {}])
  })
})

describe('approval and guards', () => {
  test('an ask with no listener in auto mode is denied by default; the approval events precede tool/result', async () => {
    const world = await schedulerWorld()
    let ran = false
    world.tools.register(tool('t', { needsApproval: () => true, execute: () => void (ran = true) }))
    await world.run([block('c1', 't')])
    expect(ran).toBe(false)
    expect(resultText(world.session, 'c1')).toBe('Tool error (TOOL_DENIED): "t" was not approved: no approver answered')
    const types = world.session.events
      .map((event) => event.type)
      .filter((type) => type.startsWith('approval/') || type.startsWith('tool/'))
    expect(types).toEqual(['tool/call', 'approval/asked', 'approval/decided', 'tool/result'])
  })

  test("pre-execute 'ask' passes its reason to the approval, and an allowing listener lets the body run", async () => {
    const world = await schedulerWorld()
    let ran = false
    world.tools.register(tool('t', { execute: () => void (ran = true) }))
    world.ctx.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'writes files' }))
    const reasons: (string | undefined)[] = []
    world.ctx.on('approval/request', (payload) => {
      reasons.push(payload.reason)
      return { kind: 'allow' }
    })
    await world.run([block('c1', 't')])
    expect(ran).toBe(true)
    expect(reasons).toEqual(['writes files'])
    const asked = world.session.events.find((event) => event.type === 'approval/asked')
    expect(asked?.data).toMatchObject({ callId: 'c1', toolName: 't', reason: 'writes files' })
  })

  test('needsApproval gets the parsed args and the call context; undefined asks, false does not, a throw denies', async () => {
    const world = await schedulerWorld()
    const seen: { args: unknown; context: ToolContext }[] = []
    world.tools.register([
      tool('maybe', {
        needsApproval: (args, context) => {
          seen.push({ args, context })
          return undefined
        },
      }),
      tool('never', { needsApproval: () => false }),
      tool('broken', {
        needsApproval: () => {
          throw new Error('approval check exploded')
        },
      }),
    ])
    await world.run([block('c1', 'maybe', '{"x":1}'), block('c2', 'never'), block('c3', 'broken')])
    expect(seen[0]?.args).toEqual({ x: 1 })
    expect(seen[0]?.context.callId).toBe('c1')
    expect(resultText(world.session, 'c1')).toBe(
      'Tool error (TOOL_DENIED): "maybe" was not approved: no approver answered',
    )
    expect(resultText(world.session, 'c2')).toBe('never')
    expect(resultText(world.session, 'c3')).toBe(
      'Tool error (TOOL_DENIED): a policy check for "broken" failed: approval check exploded',
    )
  })

  test('guards run after approval allowed: a string denies with it, a throw denies, undefined allows', async () => {
    const world = await schedulerWorld()
    world.tools.register([tool('a'), tool('b'), tool('c')])
    const order: string[] = []
    world.tools.guard((call) => {
      order.push(`agent:${call.callId}`)
      if (call.name === 'a') return 'no a today'
      if (call.name === 'b') throw new Error('guard exploded')
      return undefined
    })
    await world.run([block('c1', 'a'), block('c2', 'b'), block('c3', 'c')])
    expect(resultText(world.session, 'c1')).toBe('Tool error (TOOL_DENIED): no a today')
    expect(resultText(world.session, 'c2')).toBe(
      'Tool error (TOOL_DENIED): a policy check for "b" failed: guard exploded',
    )
    expect(resultText(world.session, 'c3')).toBe('c')
    expect(order).toEqual(['agent:c1', 'agent:c2', 'agent:c3'])
  })

  test('the checkpoint runs once per dispatched call, before the body; a rejection is TOOL_FAILED and the body never runs', async () => {
    const world = await schedulerWorld()
    const events: string[] = []
    world.tools.register(tool('t', { execute: (_args, context) => void events.push(`body ${context.callId}`) }))
    let fail = false
    const report = await world.run([block('c1', 't'), block('c2', 't'), block('c3', 'nope')], {
      step: {
        checkpoint: async () => {
          events.push(`checkpoint ${toolLog(world.session).at(-1)}`)
          if (fail) throw new Error('disk full')
          fail = true
        },
      },
    })
    expect(report).toEqual({ outcome: 'owed' })
    expect(events).toEqual(['checkpoint tool/call c1', 'body c1', 'checkpoint tool/call c2'])
    expect(resultText(world.session, 'c2')).toBe('Tool error (TOOL_FAILED): disk full')
  })

  test('the default checkpoint flushes the session to persistence before the body runs', async () => {
    const world = await schedulerWorld()
    let storedBeforeBody: number | undefined
    world.tools.register(
      tool('t', {
        execute: async () => {
          const stored = await world.harness.persistence.adapter.load(world.session.id)
          storedBeforeBody = stored.events.filter((event) => event.type === 'tool/call').length
        },
      }),
    )
    await world.run([block('c1', 't')])
    expect(world.checkpoints.count).toBe(1)
    expect(storedBeforeBody).toBe(1)
  })
})
