/**
 * Tool results through the loop: the size limit (through the agent options), conclusion and
 * contexts, and the repeat reminder, plus the initiator rule (every tool body runs inside `agents.initiator.run(agent, …)`),
 * through a real agent turn with `verifyReconstruction: true`.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import {
  type Agent,
  createHarness,
  type ModelRequest,
  PluginConfigError,
  PluginStartError,
  repeatToolReminder,
  toolResult,
} from 'yoke'
import { call, text } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'
import {
  afterFirstAnchor,
  eventsOf,
  loopLog,
  loopWorld,
  rawTool,
  requestToolResults,
  requestUserTexts,
  turnEnds,
  until,
} from './loop-helpers.js'

const toolContext = { kind: 'plugin', plugin: 'tools', form: 'tool-context' }

describe('size limit through the loop', () => {
  const big = `${'a'.repeat(149_999)}-${'z'.repeat(150_000)}`
  const marker = '\n[… tool output truncated: 300000 bytes in total, limit 102400 bytes …]\n'

  test('default agent options: the stored and sent result is cut to 102400 bytes with the marker; meta has no full', async () => {
    const { agent, model } = await loopWorld([call('c1', 'big', '{}'), text('done')], {
      tools: [rawTool('big', { execute: () => big })],
    })
    const live: unknown[] = []
    agent.ctx.on('tools/result', (payload) => {
      live.push(payload.result.content)
    })
    expect((await agent.run('go')).reason).toEqual({ kind: 'completed' })
    const stored = eventsOf(agent, 'tool/result')[0]?.data as {
      meta?: unknown
      message: { content: { content: { type: string; text: string }[] }[] }
    }
    const blocks = stored.message.content[0]?.content ?? []
    expect(blocks).toHaveLength(1)
    const sent = blocks[0]?.text ?? ''
    expect(Buffer.byteLength(sent, 'utf8')).toBeLessThanOrEqual(102_400)
    expect(sent).toContain(marker)
    const [head, tail] = sent.split(marker)
    expect(big.startsWith(head ?? '-')).toBe(true)
    expect(big.endsWith(tail ?? '-')).toBe(true)
    expect(head?.length).toBeGreaterThan(50_000)
    expect(tail?.length).toBeGreaterThan(50_000)
    expect(stored.meta).toEqual({ 'yoke:truncation': { originalBytes: 300_000, limitBytes: 102_400 } })
    expect(requestToolResults(model.requests[1])).toEqual([`c1: ${sent}`])
    expect(live).toEqual([[{ type: 'text', text: big }]])
  })

  test("toolResultSpill 'meta' and toolResultMaxBytes from the agent options: full holds the original content", async () => {
    const { agent, model } = await loopWorld([call('c1', 'big', '{}'), text('done')], {
      tools: [rawTool('big', { execute: () => big })],
      options: { toolResultSpill: 'meta', toolResultMaxBytes: 4096 },
    })
    expect((await agent.run('go')).reason).toEqual({ kind: 'completed' })
    const stored = eventsOf(agent, 'tool/result')[0]?.data as {
      meta?: unknown
      message: { content: { content: { type: string; text: string }[] }[] }
    }
    const sent = stored.message.content[0]?.content[0]?.text ?? ''
    expect(Buffer.byteLength(sent, 'utf8')).toBeLessThanOrEqual(4096)
    expect(sent).toContain('tool output truncated: 300000 bytes in total, limit 4096 bytes')
    expect(stored.meta).toEqual({
      'yoke:truncation': { originalBytes: 300_000, limitBytes: 4096, full: [{ type: 'text', text: big }] },
    })
    // The spill is log-only: the model sees the cut text.
    expect(requestToolResults(model.requests[1])).toEqual([`c1: ${sent}`])
  })
})

describe('conclusion and contexts through the loop', () => {
  test("a concluding result with a context: tool/result, the next-step splice holding 'note', a second step logging it; 2 requests", async () => {
    const finish = rawTool('finish', {
      execute: () => toolResult({ content: 'ok', concludesTurn: true, additionalContexts: ['note'] }),
    })
    const { agent, model } = await loopWorld([call('c1', 'finish', '{}'), text('noted')], { tools: [finish] })
    const result = await agent.run('go')
    expect(result).toMatchObject({ turn: 1, reason: { kind: 'completed' }, text: 'noted' })
    const from = afterFirstAnchor(agent)
    expect(loopLog(agent, from).slice(0, 7)).toEqual([
      'tool/call c1',
      'tool/result c1',
      'agent/inbox/spliced',
      'step/end',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
    ])
    const splice = agent.session.events.find((event) => event.seq >= from && event.type === 'agent/inbox/spliced')
    expect(splice?.data).toMatchObject({
      target: 'next-step',
      start: 0,
      inserted: [{ role: 'user', content: [{ type: 'text', text: 'note' }], source: toolContext }],
    })
    expect(splice?.data).not.toHaveProperty('outcome')
    const logged = eventsOf(agent, 'user/message').map((event) => event.data)
    expect(logged).toHaveLength(2)
    expect(logged[1]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'note' }], source: toolContext })
    expect(eventsOf(agent, 'step/start').map((event) => event.data)).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ])
    expect(model.requests).toHaveLength(2)
    expect(requestToolResults(model.requests[1])).toEqual(['c1: ok'])
    expect(requestUserTexts(model.requests[1])).toEqual(['go', 'note'])
    expect(model.requests[1]?.messages.at(-1)?.source).toEqual(toolContext)
  })

  test('a concluding result without contexts ends the turn after its step: one request', async () => {
    const finish = rawTool('finish', { execute: () => toolResult({ content: 'ok', concludesTurn: true }) })
    const { agent, model } = await loopWorld([call('c1', 'finish', '{}')], { tools: [finish] })
    expect((await agent.run('go')).reason).toEqual({ kind: 'completed' })
    expect(model.requests).toHaveLength(1)
    expect(loopLog(agent, afterFirstAnchor(agent))).toEqual(['tool/call c1', 'tool/result c1', 'step/end', 'turn/end'])
  })

  test('concludesTurn on an isError result is ignored: a follow-up request happens', async () => {
    const finish = rawTool('finish', {
      execute: () => toolResult({ content: 'broken', isError: true, concludesTurn: true }),
    })
    const { agent, model } = await loopWorld([call('c1', 'finish', '{}'), text('recovered')], { tools: [finish] })
    const result = await agent.run('go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'recovered' })
    expect(model.requests).toHaveLength(2)
    expect(requestToolResults(model.requests[1])).toEqual(['c1 error: broken'])
    expect(loopLog(agent, afterFirstAnchor(agent)).slice(0, 4)).toEqual([
      'tool/call c1',
      'tool/result c1 TOOL_FAILED',
      'step/end',
      'step/start',
    ])
  })
})

const readA = '{"path":"a","n":1}'
const readAReordered = '{"n":1,"path":"a"}'
const readB = '{"path":"b","n":1}'
const firstReminder =
  'You have made the same tool call 3 times in a row with identical arguments. If it is not helping, try a different approach.'

/** One call per step: `[name, rawArguments]` in order, then a final text. */
function steps(list: readonly (readonly [string, string])[]) {
  return [...list.map(([name, rawArguments], index) => call(`c${index + 1}`, name, rawArguments)), text('done')]
}

async function reminderWorld(list: readonly (readonly [string, string])[], exclude: readonly string[] = []) {
  const read = rawTool('read', { execute: (args) => `contents of ${String((args as { path: unknown }).path)}` })
  const ls = rawTool('ls', { execute: () => 'a b' })
  return loopWorld(steps(list), { tools: [read, ls], harness: { plugins: [repeatToolReminder({ exclude })] } })
}

/** The index of each request whose last message is the first-threshold reminder. */
function remindedRequests(world: Awaited<ReturnType<typeof reminderWorld>>): number[] {
  return world.model.requests.flatMap((request, index) =>
    requestUserTexts(request).at(-1) === firstReminder ? [index] : [],
  )
}

describe('repeat reminder through the loop', () => {
  test('three identical reads in consecutive steps (keys reordered once): the next request holds the reminder; results unchanged', async () => {
    const world = await reminderWorld([
      ['read', readA],
      ['read', readAReordered],
      ['read', readA],
    ])
    const result = await world.agent.run('go')
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'done' })
    expect(world.model.requests).toHaveLength(4)
    expect(remindedRequests(world)).toEqual([3])
    expect(requestUserTexts(world.model.requests[2])).toEqual(['go'])
    expect(requestUserTexts(world.model.requests[3])).toEqual(['go', firstReminder])
    expect(world.model.requests[3]?.messages.at(-1)?.source).toEqual({ kind: 'plugin', plugin: 'repeat-tool-reminder' })
    expect(requestToolResults(world.model.requests[3])).toEqual([
      'c1: contents of a',
      'c2: contents of a',
      'c3: contents of a',
    ])
    const reminders = eventsOf(world.agent, 'user/message').filter(
      (event) => (event.data as { source: { kind: string } }).source.kind === 'plugin',
    )
    expect(reminders).toHaveLength(1)
    // It was injected during c3's post-execute and entered step 4.
    const c3Result = eventsOf(world.agent, 'tool/result')[2]
    expect(reminders[0]?.seq).toBeGreaterThan(c3Result?.seq ?? Number.POSITIVE_INFINITY)
  })

  test('an excluded tool in between changes nothing', async () => {
    const world = await reminderWorld(
      [
        ['read', readA],
        ['ls', '{}'],
        ['read', readA],
        ['read', readA],
      ],
      ['ls'],
    )
    expect((await world.agent.run('go')).reason).toEqual({ kind: 'completed' })
    expect(remindedRequests(world)).toEqual([4])
  })

  test('a different call in between resets the count', async () => {
    const world = await reminderWorld([
      ['read', readA],
      ['read', readB],
      ['read', readA],
      ['read', readA],
    ])
    expect((await world.agent.run('go')).reason).toEqual({ kind: 'completed' })
    expect(remindedRequests(world)).toEqual([])
    expect(world.model.requests).toHaveLength(5)
    expect(eventsOf(world.agent, 'user/message')).toHaveLength(1)
  })

  test('thresholds [3, 3] fail the plugin start with PluginConfigError', async () => {
    const error = await rejectionOf(createHarness({ plugins: [repeatToolReminder({ thresholds: [3, 3] })] }))
    const started = expectError(error, PluginStartError, 'PLUGIN_START_FAILED', { plugin: 'repeat-tool-reminder' })
    expectError(started.cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID', { plugin: 'repeat-tool-reminder' })
  })
})

describe('tool bodies run inside the initiator frame of their agent', () => {
  test('inside a tool body, agents.initiator.current() is the calling agent, also after an await; outside, undefined', async () => {
    const seen: { agent: string; before: unknown; after: unknown }[] = []
    let world: Awaited<ReturnType<typeof loopWorld>> | undefined
    const who = rawTool('who', {
      isConcurrencySafe: () => true,
      execute: async (_args, context) => {
        const initiator = (world as NonNullable<typeof world>).harness.agents.initiator
        const before = initiator.current()
        await new Promise<void>((resolve) => setImmediate(resolve))
        seen.push({ agent: context.agent.id, before, after: initiator.current() })
        return 'ok'
      },
    })
    // Each agent calls `who` once, then answers: the reply depends on the request, not on which agent asked first.
    const reply = (request: ModelRequest) =>
      request.messages.at(-1)?.source.kind === 'tool'
        ? text('done')
        : call(`c-${String(request.metadata.sessionId)}`, 'who', '{}')
    world = await loopWorld([reply, reply, reply, reply], { tools: [who] })
    const { harness, agent } = world
    const other = await harness.createAgent({ options: { verifyReconstruction: true } })
    expect(harness.agents.initiator.current()).toBeUndefined()
    const first = agent.run('go')
    const second = other.run('go')
    expect((await first).reason).toEqual({ kind: 'completed' })
    expect((await second).reason).toEqual({ kind: 'completed' })
    const byAgent = new Map<string, Agent>([
      [agent.id, agent],
      [other.id, other],
    ])
    expect(seen.map((entry) => entry.agent).sort()).toEqual([agent.id, other.id].sort())
    for (const entry of seen) {
      expect(entry.before).toBe(byAgent.get(entry.agent))
      expect(entry.after).toBe(byAgent.get(entry.agent))
    }
    await until(() => agent.status === 'idle' && other.status === 'idle', 'both agents idle')
    expect(turnEnds(other)).toEqual([{ turn: 1, reason: { kind: 'completed' } }])
  })
})
