/**
 * The repeat-tool reminder's logic: `tools/post-execute` is
 * dispatched directly through `harness.ctx.waterfall` with frozen calls and results, for fake
 * agents that record their `inject` calls.
 *
 * @module
 */
import { afterEach, describe, expect, test } from 'vitest'
import {
  createHarness,
  type Harness,
  PluginConfigError,
  PluginStartError,
  type RepeatToolReminderOptions,
  repeatToolReminder,
  type Session,
  type ToolResult,
} from 'yoke'
import type { ToolAgent, ToolCallInfo } from '../../src/tools/index.js'
import { fakeIds } from 'yoke/testing'
import { rejectionOf } from '../helpers/outcomes.js'
import { type RecordingLogger, recordingLogger } from '../helpers/recording-logger.js'
import { SS, TS, UM } from '../session/builders.js'
import { append, appendAll, expectError } from '../session/session-helpers.js'

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()))
})

/** A fake agent whose `inject` records its input. */
interface RecordingAgent extends ToolAgent {
  readonly injected: unknown[]
  inject(input: unknown): unknown
}

interface Setup {
  readonly harness: Harness
  readonly logger: RecordingLogger
  readonly agent: RecordingAgent
}

async function setup(options?: RepeatToolReminderOptions): Promise<Setup> {
  const logger = recordingLogger()
  const harness = await createHarness({
    ids: fakeIds(),
    logger,
    patches: [{ id: 'persistence', disabled: true }],
    plugins: [options === undefined ? repeatToolReminder() : repeatToolReminder(options)],
  })
  harnesses.push(harness)
  return { harness, logger, agent: agentOf(harness) }
}

function agentOf(harness: Harness): RecordingAgent {
  const session = appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
  const injected: unknown[] = []
  return Object.freeze({
    id: session.id,
    session,
    injected,
    inject(input: unknown) {
      injected.push(input)
      return input
    },
  })
}

function result(text: string): ToolResult {
  return Object.freeze({
    content: Object.freeze([Object.freeze({ type: 'text', text })]),
    isError: false,
    concludesTurn: false,
    additionalContexts: Object.freeze([]),
  })
}

let callCount = 0
function callOf(agent: ToolAgent, name: string, rawArguments: string): ToolCallInfo {
  callCount++
  return Object.freeze({
    agent,
    session: agent.session,
    turn: 1,
    step: callCount,
    callId: `c${callCount}`,
    name,
    arguments: rawArguments,
    signal: new AbortController().signal,
  })
}

/** Dispatches `tools/post-execute` for one call; asserts the result comes back as the same object. */
async function postExecute(harness: Harness, agent: ToolAgent, name: string, rawArguments: string): Promise<void> {
  const given = result(`${name} ok`)
  const returned = await harness.ctx.waterfall(
    'tools/post-execute',
    Object.freeze({ call: callOf(agent, name, rawArguments), result: given }),
    (payload) => payload.result,
  )
  expect(returned).toBe(given)
}

async function calls(harness: Harness, agent: ToolAgent, list: readonly (readonly [string, string])[]): Promise<void> {
  for (const [name, rawArguments] of list) await postExecute(harness, agent, name, rawArguments)
}

const first = (count: number): string =>
  `You have made the same tool call ${count} times in a row with identical arguments. If it is not helping, try a different approach.`
const later = (name: string, count: number, shown: string): string =>
  `"${name}" has now been called ${count} times in a row with the same arguments: ${shown}. Repeating it is unlikely to help; change the arguments, use another tool, or answer with what you have.`
const reminder = (text: string) => ({
  content: [{ type: 'text', text }],
  source: { kind: 'plugin', plugin: 'repeat-tool-reminder' },
})

const readA = ['read', '{"path":"a","n":1}'] as const
const readAReordered = ['read', '{"n":1,"path":"a"}'] as const
const readB = ['read', '{"path":"b","n":1}'] as const

describe('counting identical calls', () => {
  test('three calls in a row (keys reordered the second time) inject the first-threshold reminder once, at the third', async () => {
    const { harness, agent } = await setup()
    await calls(harness, agent, [readA, readAReordered])
    expect(agent.injected).toEqual([])
    await calls(harness, agent, [readA])
    expect(agent.injected).toEqual([reminder(first(3))])
    await calls(harness, agent, [readA])
    expect(agent.injected).toHaveLength(1)
  })

  test('an excluded tool in between neither counts nor resets', async () => {
    const { harness, agent } = await setup({ exclude: ['wait'] })
    await calls(harness, agent, [readA, ['wait', '{"ms":10}'], readA, ['wait', '{"ms":10}'], ['wait', '{"ms":10}']])
    expect(agent.injected).toEqual([])
    await calls(harness, agent, [readA])
    expect(agent.injected).toEqual([reminder(first(3))])
  })

  test('the same tool without exclude breaks the chain', async () => {
    const { harness, agent } = await setup()
    await calls(harness, agent, [readA, ['wait', '{"ms":10}'], readA, readA])
    expect(agent.injected).toEqual([])
  })

  test('a different call in between resets the count to 1', async () => {
    const { harness, agent } = await setup()
    await calls(harness, agent, [readA, readA, readB, readA, readA])
    expect(agent.injected).toEqual([])
    await calls(harness, agent, [readA])
    expect(agent.injected).toEqual([reminder(first(3))])
  })

  test('another tool with the same arguments is a different call', async () => {
    const { harness, agent } = await setup()
    await calls(harness, agent, [readA, readA, ['grep', readA[1]]])
    expect(agent.injected).toEqual([])
  })

  test('thresholds 5 and 8 give the pointed reminder quoting the raw arguments; nothing after the last threshold', async () => {
    const { harness, agent } = await setup()
    await calls(harness, agent, [readA, readA, readA, readA, readAReordered])
    expect(agent.injected).toEqual([reminder(first(3)), reminder(later('read', 5, '{"n":1,"path":"a"}'))])
    await calls(harness, agent, [readA, readA, readA, readA, readA, readA])
    expect(agent.injected).toEqual([
      reminder(first(3)),
      reminder(later('read', 5, '{"n":1,"path":"a"}')),
      reminder(later('read', 8, readA[1])),
    ])
  })

  test('arguments beyond 500 characters are cut with "… (+<k> more chars)", never inside a code point', async () => {
    const { harness, agent } = await setup({ thresholds: [2, 3] })
    const ascii = `{"p":"${'x'.repeat(594)}"}`
    expect(ascii).toHaveLength(602)
    await calls(harness, agent, [
      ['w', ascii],
      ['w', ascii],
      ['w', ascii],
    ])
    expect(agent.injected[1]).toEqual(reminder(later('w', 3, `${ascii.slice(0, 500)}… (+102 more chars)`)))
    const emoji = `{"p":"${'😀'.repeat(600)}"}`
    await calls(harness, agent, [
      ['w', emoji],
      ['w', emoji],
      ['w', emoji],
    ])
    expect(agent.injected[3]).toEqual(reminder(later('w', 3, `{"p":"${'😀'.repeat(494)}… (+108 more chars)`)))
    const exact = `"${'y'.repeat(498)}"`
    await calls(harness, agent, [
      ['w', exact],
      ['w', exact],
      ['w', exact],
    ])
    expect(agent.injected[5]).toEqual(reminder(later('w', 3, exact)))
  })

  test('unparsable arguments compare as raw text; empty arguments equal {}', async () => {
    const { harness, agent } = await setup()
    await calls(harness, agent, [
      ['t', 'not json'],
      ['t', 'not json'],
      ['t', 'not json'],
    ])
    expect(agent.injected).toEqual([reminder(first(3))])
    await calls(harness, agent, [
      ['t', 'not json '],
      ['t', ''],
      ['t', '{}'],
      ['t', ' {} '],
    ])
    expect(agent.injected).toHaveLength(2)
  })

  test('chains are per agent: interleaved calls of two agents do not reset each other', async () => {
    const { harness, agent } = await setup()
    const other = agentOf(harness)
    await calls(harness, agent, [readA])
    await calls(harness, other, [readB])
    await calls(harness, agent, [readA])
    await calls(harness, other, [readB])
    await calls(harness, agent, [readA])
    expect(agent.injected).toEqual([reminder(first(3))])
    expect(other.injected).toEqual([])
  })
})

describe('resets and delivery', () => {
  function userMessage(session: Session, kind: 'user' | 'plugin'): void {
    const plan = UM(`m${session.length}`)
    const data =
      kind === 'user' ? plan.data : { ...(plan.data as object), source: { kind: 'plugin', plugin: 'someone' } }
    append(session, { ...plan, data })
  }

  test("a user/message with source kind 'user' in the agent's session resets its chain", async () => {
    const { harness, agent } = await setup()
    await calls(harness, agent, [readA, readA])
    userMessage(agent.session, 'user')
    await calls(harness, agent, [readA, readA])
    expect(agent.injected).toEqual([])
    await calls(harness, agent, [readA])
    expect(agent.injected).toEqual([reminder(first(3))])
  })

  test("a plugin-sourced user/message, or a user message in another agent's session, resets nothing", async () => {
    const { harness, agent } = await setup()
    const other = agentOf(harness)
    await calls(harness, agent, [readA])
    userMessage(agent.session, 'plugin')
    await calls(harness, agent, [readA])
    userMessage(other.session, 'user')
    await calls(harness, agent, [readA])
    expect(agent.injected).toEqual([reminder(first(3))])
  })

  test('an agent without inject: the reminder is dropped with a warning, the result is unchanged', async () => {
    const { harness, logger } = await setup()
    const session = appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
    const bare: ToolAgent = Object.freeze({ id: session.id, session })
    await calls(harness, bare, [readA, readA, readA])
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        message: 'repeat-tool-reminder: the agent has no inject(); the reminder was dropped',
        fields: { agent: session.id },
      },
    ])
  })

  test('an inject that throws is contained and logged; the result is unchanged', async () => {
    const { harness, logger } = await setup()
    const session = appendAll(harness.sessions.create(), [TS(1), SS(1, 1)])
    const failing = Object.freeze({
      id: session.id,
      session,
      inject() {
        throw new Error('inbox closed')
      },
    })
    await calls(harness, failing, [readA, readA, readA])
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        message: 'repeat-tool-reminder: agent.inject() threw; the reminder was dropped',
        fields: { agent: session.id, error: 'inbox closed' },
      },
    ])
  })

  test('it calls next() first and returns its result unchanged, whatever inner middleware returned', async () => {
    const { harness, agent } = await setup()
    const replaced = result('replaced')
    const order: string[] = []
    harness.on('tools/post-execute', () => {
      order.push('inner')
      return replaced
    })
    for (let index = 0; index < 3; index++) {
      const returned = await harness.ctx.waterfall(
        'tools/post-execute',
        Object.freeze({ call: callOf(agent, ...readA), result: result('x') }),
        (payload) => payload.result,
      )
      expect(returned).toBe(replaced)
    }
    expect(order).toEqual(['inner', 'inner', 'inner'])
    expect(agent.injected).toEqual([reminder(first(3))])
  })
})

describe('config', () => {
  test.each([
    ['[3, 3]', [3, 3]],
    ['[1]', [1]],
    ['[]', []],
    ['[3.5]', [3.5]],
    ['[5, 3]', [5, 3]],
    ['a string', '3'],
  ])('thresholds %s fail the start with PluginConfigError at path [thresholds]', async (_name, thresholds) => {
    const plugin = repeatToolReminder({ thresholds } as unknown as RepeatToolReminderOptions)
    const error = expectError(
      await rejectionOf(createHarness({ plugins: [plugin] })),
      PluginStartError,
      'PLUGIN_START_FAILED',
      {
        plugin: 'repeat-tool-reminder',
      },
    )
    const cause = expectError(error.cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID', {
      plugin: 'repeat-tool-reminder',
    })
    expect(cause.issues).toEqual([
      { path: ['thresholds'], message: 'must be a non-empty, strictly increasing list of integers ≥ 2' },
    ])
  })

  test('exclude must be tool names; unknown keys are refused', async () => {
    const bad = await rejectionOf(
      createHarness({ plugins: [repeatToolReminder({ exclude: [1] } as unknown as RepeatToolReminderOptions)] }),
    )
    expect(
      expectError((bad as PluginStartError).cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID').issues[0]?.path,
    ).toEqual(['exclude', 0])
    const extra = await rejectionOf(
      createHarness({ plugins: [repeatToolReminder({ threshold: [3] } as unknown as RepeatToolReminderOptions)] }),
    )
    expect(
      expectError((extra as PluginStartError).cause, PluginConfigError, 'PLUGIN_CONFIG_INVALID').issues[0]?.path,
    ).toEqual(['threshold'])
  })

  test('the options are copied when the plugin is made; the entry is repeat-tool-reminder with the defaults filled in', async () => {
    const thresholds = [2, 4]
    const plugin = repeatToolReminder({ thresholds })
    thresholds.push(1)
    const harness = await createHarness({
      ids: fakeIds(),
      patches: [{ id: 'persistence', disabled: true }],
      plugins: [plugin],
    })
    harnesses.push(harness)
    expect(harness.describe().entries.find((entry) => entry.id === 'repeat-tool-reminder')?.disabled).toBe(false)
    const agent = agentOf(harness)
    await calls(harness, agent, [readA, readA])
    expect(agent.injected).toEqual([reminder(first(2))])
  })

  test('it is not mounted by default', async () => {
    const harness = await createHarness({ patches: [{ id: 'persistence', disabled: true }] })
    harnesses.push(harness)
    expect(harness.describe().entries.map((entry) => entry.id)).not.toContain('repeat-tool-reminder')
  })
})
