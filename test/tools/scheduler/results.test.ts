/**
 * The commit phase: the size limit, the monotonic post-execute rule, conclusion and additional contexts, and
 * `reportProgress`.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { InvalidArgumentError, type JsonValue, type ToolContext, type ToolResult, toolResult } from 'yoke'
import { thrownBy } from '../../helpers/outcomes.js'
import { expectError } from '../../session/session-helpers.js'
import { block, resultData, resultText, schedulerWorld, settle, tool, toolLog } from './scheduler-helpers.js'

describe('size limit', () => {
  const big = `${'a'.repeat(149_999)}-${'z'.repeat(150_000)}`

  test('300 000 ASCII characters are cut to the default limit with the marker, head and tail kept', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: () => big }))
    await world.run([block('c1', 't')])
    const { message, meta } = resultData(world.session, 'c1')
    const content = message.content[0].content
    expect(content).toHaveLength(1)
    const text = resultText(world.session, 'c1')
    expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(102_400)
    expect(text).toContain('tool output truncated: 300000 bytes in total, limit 102400 bytes')
    expect(text.startsWith('a')).toBe(true)
    expect(text.endsWith('z')).toBe(true)
    expect(meta).toEqual({ 'yoke:truncation': { originalBytes: 300_000, limitBytes: 102_400 } })
    expect(world.live.results[0]?.result.content).toEqual([{ type: 'text', text: big }])
  })

  test("with toolResultSpill 'meta', full holds the original content; a custom limit applies", async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: () => big }))
    await world.run([block('c1', 't')], { options: { toolResultSpill: 'meta', toolResultMaxBytes: 4096 } })
    const { meta } = resultData(world.session, 'c1')
    expect(meta).toEqual({
      'yoke:truncation': { originalBytes: 300_000, limitBytes: 4096, full: [{ type: 'text', text: big }] },
    })
    expect(Buffer.byteLength(resultText(world.session, 'c1'), 'utf8')).toBeLessThanOrEqual(4096)
  })

  test('multi-byte text is never split inside a code point', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: () => '€😀'.repeat(2000) }))
    await world.run([block('c1', 't')], { options: { toolResultMaxBytes: 1024 } })
    const text = resultText(world.session, 'c1')
    expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(1024)
    expect(text).not.toContain('\uFFFD')
    expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text)
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(text)).toBe(false)
  })
})

describe('post-execute is monotonic', () => {
  async function postExecuted(
    body: () => unknown,
    listener: (result: ToolResult) => unknown,
    args = '{}',
  ): Promise<{ text: string; data: ReturnType<typeof resultData>; seen: ToolResult[] }> {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { input: { type: 'object' }, execute: body as never }))
    const seen: ToolResult[] = []
    world.ctx.on('tools/post-execute', ({ result }) => {
      seen.push(result)
      return listener(result) as ToolResult
    })
    await world.run([block('c1', 't', args)])
    return { text: resultText(world.session, 'c1'), data: resultData(world.session, 'c1'), seen }
  }

  test('turning INVALID_ARGUMENTS into a success gives TOOL_FAILED', async () => {
    const { text, data } = await postExecuted(
      () => 'never',
      () => ({
        content: [{ type: 'text', text: 'fine' }],
        isError: false,
        concludesTurn: false,
        additionalContexts: [],
      }),
      'not json',
    )
    expect(text).toBe(
      'Tool error (TOOL_FAILED): a post-execute listener for "t" turned a result with code INVALID_ARGUMENTS into a success',
    )
    expect(data.error).toEqual({ name: 'ToolFailedError', code: 'TOOL_FAILED' })
  })

  test('a block of a success with TOOL_DENIED gives exactly that', async () => {
    const { text, data } = await postExecuted(
      () => toolResult({ content: 'secret', meta: { kept: 1 } }),
      (result) => ({
        ...result,
        isError: true,
        error: { code: 'TOOL_DENIED', message: 'nope' },
        content: [{ type: 'text', text: 'nope' }],
      }),
    )
    expect(text).toBe('nope')
    expect(data.error).toEqual({ name: 'ToolDeniedError', code: 'TOOL_DENIED' })
    expect(data.meta).toEqual({ kept: 1 })
  })

  test("replacing a success's content keeps the success and its meta", async () => {
    const { text, data } = await postExecuted(
      () => toolResult({ content: 'original', meta: { source: 'disk' } }),
      (result) => ({ ...result, content: [{ type: 'text', text: 'redacted' }] }),
    )
    expect(text).toBe('redacted')
    expect(data.error).toBeUndefined()
    expect(data.meta).toEqual({ source: 'disk' })
  })

  test('changing a success to TOOL_TIMEOUT gives TOOL_FAILED', async () => {
    const { text } = await postExecuted(
      () => 'ok',
      (result) => ({ ...result, isError: true, error: { code: 'TOOL_TIMEOUT', message: 'x' } }),
    )
    expect(text).toBe(
      'Tool error (TOOL_FAILED): a post-execute listener for "t" turned a success into TOOL_TIMEOUT; only TOOL_DENIED may block a success',
    )
  })

  test('an error keeps its code while its content and meta change; another code gives TOOL_FAILED', async () => {
    const kept = await postExecuted(
      () => 'x',
      (result) => ({ ...result, content: [{ type: 'text', text: 'rewritten' }], meta: { note: 'n' } }),
      'not json',
    )
    expect(kept.text).toBe('rewritten')
    expect(kept.data.error).toEqual({ name: 'ToolArgumentsError', code: 'INVALID_ARGUMENTS' })
    expect(kept.data.meta).toEqual({ note: 'n' })
    const changed = await postExecuted(
      () => 'x',
      (result) => ({ ...result, error: { code: 'TOOL_DENIED', message: 'd' } }),
      'not json',
    )
    expect(changed.text).toBe(
      'Tool error (TOOL_FAILED): a post-execute listener for "t" changed the result code INVALID_ARGUMENTS into TOOL_DENIED',
    )
  })

  test('an invalid shape gives TOOL_FAILED naming the problem', async () => {
    const { text } = await postExecuted(
      () => 'ok',
      (result) => ({ ...result, content: 42 }),
    )
    expect(text).toBe(
      'Tool error (TOOL_FAILED): a post-execute listener for "t" returned an invalid result: content is not a string or an array of text and image blocks',
    )
  })

  test('a post-execute throw turns a success into TOOL_DENIED and leaves an error as it was', async () => {
    const thrower = () => {
      throw new Error('post exploded')
    }
    const success = await postExecuted(() => 'ok', thrower)
    expect(success.text).toBe('Tool error (TOOL_DENIED): a policy check for "t" failed: post exploded')
    const failure = await postExecuted(() => 'ok', thrower, 'not json')
    expect(failure.text).toBe('Tool error (INVALID_ARGUMENTS): arguments for "t" are not a valid JSON object')
  })

  test('the result a listener receives is frozen, and a pass-through keeps it', async () => {
    const { seen, text } = await postExecuted(
      () => toolResult({ content: 'ok', additionalContexts: ['c'] }),
      () => undefined,
    )
    expect(text).toBe('ok')
    expect(Object.isFrozen(seen[0])).toBe(true)
    expect(Object.isFrozen(seen[0]?.content)).toBe(true)
    expect(Object.isFrozen(seen[0]?.additionalContexts)).toBe(true)
  })

  test('post-execute runs in model order, after the call settled, and before its tool/result', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t'))
    const logged: string[][] = []
    world.ctx.on('tools/post-execute', () => {
      logged.push(toolLog(world.session))
      return undefined
    })
    await world.run([block('c1', 't'), block('c2', 't')])
    expect(logged).toEqual([['tool/call c1'], ['tool/call c1', 'tool/result c1', 'tool/call c2']])
  })
})

describe('middleware receives the normalized form from the layer inside it', () => {
  test('tools/execute: an inner wrapper returning a string reaches the outer one as a frozen ToolResult', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: () => 'body' }))
    const seen: unknown[] = []
    world.ctx.on('tools/execute', async (_payload, next) => {
      const inner = await next()
      seen.push(inner)
      return { ...(inner as ToolResult), additionalContexts: [...(inner as ToolResult).additionalContexts, 'outer'] }
    })
    world.ctx.on('tools/execute', async (_payload, next) => {
      await next()
      // A plain return form, outside the ToolResult type: normalized like a body's.
      return 'inner plain string' as unknown as ToolResult
    })
    await world.run([block('c1', 't')])
    expect(seen).toEqual([
      {
        content: [{ type: 'text', text: 'inner plain string' }],
        isError: false,
        concludesTurn: false,
        additionalContexts: [],
      },
    ])
    expect(Object.isFrozen(seen[0])).toBe(true)
    expect(resultText(world.session, 'c1')).toBe('inner plain string')
    expect(resultData(world.session, 'c1').error).toBeUndefined()
  })

  test('tools/post-execute: an inner listener returning a string reaches the outer one as a ToolResult; its context is inserted', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: () => 'body' }))
    const seen: unknown[] = []
    world.ctx.on('tools/post-execute', async (_payload, next) => {
      const inner = (await next()) as ToolResult
      seen.push(inner)
      return { ...inner, additionalContexts: [...inner.additionalContexts, 'audit'] }
    })
    world.ctx.on('tools/post-execute', async (_payload, next) => {
      await next()
      return 'redacted' as unknown as ToolResult
    })
    await world.run([block('c1', 't')])
    expect(seen).toEqual([
      { content: [{ type: 'text', text: 'redacted' }], isError: false, concludesTurn: false, additionalContexts: [] },
    ])
    expect(resultText(world.session, 'c1')).toBe('redacted')
    expect(resultData(world.session, 'c1').error).toBeUndefined()
    expect(world.contexts.map((message) => message.content[0])).toEqual([{ type: 'text', text: 'audit' }])
  })

  test('an inner layer’s invalid result reaches the outer one as TOOL_FAILED naming the field', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t', { execute: () => 'body' }))
    const seen: ToolResult[] = []
    world.ctx.on('tools/execute', async (_payload, next) => {
      seen.push((await next()) as ToolResult)
      return undefined
    })
    world.ctx.on('tools/execute', async () => ({ content: 'x', meta: 5 }) as unknown as ToolResult)
    await world.run([block('c1', 't')])
    expect(seen[0]?.error).toEqual({
      code: 'TOOL_FAILED',
      message: '"t" returned an invalid result: meta is not a plain JSON object',
    })
    expect(resultData(world.session, 'c1').error?.code).toBe('TOOL_FAILED')
  })
})

describe('conclusion and contexts', () => {
  test('a concluding success: tool/result, then its contexts inserted with the tools source; the step is concluded', async () => {
    const world = await schedulerWorld()
    const order: string[] = []
    world.tools.register(
      tool('t', {
        execute: () =>
          toolResult({
            content: 'ok',
            concludesTurn: true,
            additionalContexts: ['note', [{ type: 'text', text: 'second' }]],
          }),
      }),
    )
    const report = await world.run([block('c1', 't')], {
      step: {
        insertContext: (message) => {
          order.push(`${toolLog(world.session).at(-1)} then context`)
          world.contexts.push(message)
        },
      },
    })
    expect(report).toEqual({ outcome: 'concluded' })
    expect(order).toEqual(['tool/result c1 then context', 'tool/result c1 then context'])
    expect(world.contexts).toEqual([
      {
        id: 'm2',
        role: 'user',
        content: [{ type: 'text', text: 'note' }],
        source: { kind: 'plugin', plugin: 'tools', form: 'tool-context' },
      },
      {
        id: 'm3',
        role: 'user',
        content: [{ type: 'text', text: 'second' }],
        source: { kind: 'plugin', plugin: 'tools', form: 'tool-context' },
      },
    ])
    expect(resultData(world.session, 'c1').message.id).toBe('m1')
    expect(Object.isFrozen(world.contexts[0])).toBe(true)
    expect(world.session.events.some((event) => event.type === 'user/message')).toBe(false)
  })

  test('concludesTurn on an isError result is ignored (owed); contexts of several calls follow model order', async () => {
    const world = await schedulerWorld()
    world.tools.register([
      tool('err', {
        execute: () =>
          toolResult({ content: 'failed', isError: true, concludesTurn: true, additionalContexts: ['from err'] }),
      }),
      tool('ok', { execute: () => toolResult({ content: 'fine', additionalContexts: ['from ok'] }) }),
    ])
    const report = await world.run([block('c1', 'err'), block('c2', 'ok')])
    expect(report).toEqual({ outcome: 'owed' })
    expect(world.contexts.map((message) => message.content[0])).toEqual([
      { type: 'text', text: 'from err' },
      { type: 'text', text: 'from ok' },
    ])
  })

  test('post-execute may make a success conclude the turn', async () => {
    const world = await schedulerWorld()
    world.tools.register(tool('t'))
    world.ctx.on('tools/post-execute', ({ result }) => ({ ...result, concludesTurn: true }))
    expect(await world.run([block('c1', 't')])).toEqual({ outcome: 'concluded' })
  })
})

describe('progress', () => {
  test('reportProgress emits tools/progress and logs nothing; a non-JSON value throws; calls after settling are ignored', async () => {
    const world = await schedulerWorld()
    let saved: ToolContext | undefined
    let thrown: unknown
    world.tools.register(
      tool('t', {
        execute: (_args, context) => {
          saved = context
          const length = world.session.length
          context.reportProgress({ pct: 50 })
          expect(world.session.length).toBe(length)
          thrown = thrownBy(() => context.reportProgress(1n as unknown as JsonValue))
          return 'done'
        },
      }),
    )
    await world.run([block('c1', 't')])
    expect(world.live.progress).toEqual([{ agent: world.agent, callId: 'c1', name: 't', progress: { pct: 50 } }])
    expectError(thrown, InvalidArgumentError, 'INVALID_ARGUMENT', { argument: 'progress' })
    saved?.reportProgress({ pct: 100 })
    await settle()
    expect(world.live.progress).toHaveLength(1)
  })

  test('the context carries the call id, agent, session, turn and step, and is frozen', async () => {
    const world = await schedulerWorld()
    let saved: ToolContext | undefined
    world.tools.register(tool('t', { execute: (_args, context) => void (saved = context) }))
    await world.run([block('c7', 't')])
    expect(saved).toMatchObject({ callId: 'c7', turn: 1, step: 1 })
    expect(saved?.agent).toBe(world.agent)
    expect(saved?.session).toBe(world.session)
    expect(saved?.signal.aborted).toBe(false)
    expect(Object.isFrozen(saved)).toBe(true)
  })
})
