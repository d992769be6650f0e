/**
 * Structured output: `agent.run(input, { output })` with a zod schema or a JSON Schema. The
 * request carries `responseFormat`; the answer is parsed and checked; an invalid answer gets a
 * logged repair step; a still-invalid one rejects `OutputValidationError` with the raw text. Over
 * memory and JSONL, with tools in the same turn and rebuilt requests.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, expectTypeOf, test } from 'vitest'
import {
  createHarness,
  defineTool,
  type HarnessOptions,
  InvalidArgumentError,
  type JsonValue,
  type ModelRequest,
  OutputValidationError,
  rebuildRequest,
  type TurnResult,
  type UserMessage,
} from 'yoke'
import { fakeClock, fakeIds, hang, type ScriptEntry, scriptedModel, text, tool } from 'yoke/testing'
import { z } from 'zod'

const Weather = z.object({
  city: z.string(),
  days: z.array(z.object({ day: z.string(), celsius: z.number() })),
})

const forecast = defineTool({
  name: 'forecast',
  description: 'The forecast of a city.',
  input: z.object({ city: z.string() }),
  execute: (args) => `${args.city}: mon 21, tue 19`,
})

const good = JSON.stringify({
  city: 'Lyon',
  days: [
    { day: 'mon', celsius: 21 },
    { day: 'tue', celsius: 19 },
  ],
})
const wrongType = JSON.stringify({ city: 'Lyon', days: [{ day: 'mon', celsius: 'warm' }] })

function withoutSignal(request: ModelRequest | undefined): Omit<ModelRequest, 'signal'> {
  const { signal: _signal, ...rest } = request as ModelRequest
  return rest
}

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'yoke-output-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const stores: readonly [string, () => Partial<HarnessOptions>][] = [
  ['memory', () => ({})],
  ['jsonl', () => ({ persistence: { dir } })],
]

describe.each(stores)('structured output over %s', (name, store) => {
  async function setup(script: readonly ScriptEntry[]) {
    const model = scriptedModel(script)
    const harness = await createHarness({
      model,
      tools: [forecast],
      clock: fakeClock(),
      ids: fakeIds(),
      ...store(),
    })
    const agent = await harness.createAgent({ options: { verifyReconstruction: true } })
    return { model, harness, agent }
  }

  test('a valid answer resolves with the typed, parsed output', async () => {
    const { model, harness, agent } = await setup([text(good)])
    const result = await agent.run('weather in Lyon?', { output: Weather })
    expectTypeOf(result.output).toEqualTypeOf<z.output<typeof Weather>>()
    expect(result.output).toEqual(JSON.parse(good))
    expect(result.output.days[1]?.celsius).toBe(19)
    expect(result.reason).toEqual({ kind: 'completed' })
    expect(result.text).toBe(good)
    const format = model.requests[0]?.responseFormat
    expect(format?.type).toBe('json')
    expect(format?.schema).toMatchObject({ type: 'object', required: ['city', 'days'] })
    expect(format?.schema).not.toHaveProperty('$schema')
    await harness.close()
  })

  test('an answer in a code fence still parses', async () => {
    const { harness, agent } = await setup([text(`\`\`\`json\n${good}\n\`\`\``)])
    const result = await agent.run('weather?', { output: Weather })
    expect(result.output.city).toBe('Lyon')
    await harness.close()
  })

  test('an invalid answer gets one repair step that shows the issues, then the valid answer resolves', async () => {
    const { model, harness, agent } = await setup([text(wrongType), text(good)])
    const result = await agent.run('weather?', { output: Weather })
    expect(result.output.city).toBe('Lyon')
    expect(model.requests).toHaveLength(2)
    const repair = model.requests[1]?.messages.at(-1) as UserMessage
    expect(repair.role).toBe('user')
    expect(repair.source).toEqual({ kind: 'plugin', plugin: 'agent-loop', form: 'output-repair' })
    const repairText = (repair.content[0] as { text: string }).text
    expect(repairText).toContain('days[0].celsius: expected number, received string')
    // The repair is a logged user/message of step 2, so the log holds what the model saw.
    const logged = agent.session.events.filter((event) => event.type === 'user/message').at(-1)
    expect(logged?.data).toEqual(repair)
    expect(model.requests[1]?.responseFormat).toEqual(model.requests[0]?.responseFormat)
    expect(rebuildRequest(agent.session, { turn: 1, step: 2 })).toStrictEqual(withoutSignal(model.requests[1]))
    await harness.close()
  })

  test('an answer still invalid after its repair rejects OutputValidationError with the path and the raw text', async () => {
    const { model, harness, agent } = await setup([text('not json at all'), text(wrongType)])
    const error = await agent.run('weather?', { output: Weather }).catch((caught: unknown) => caught)
    expect(OutputValidationError.is(error)).toBe(true)
    const failure = error as OutputValidationError
    expect(failure.code).toBe('OUTPUT_INVALID')
    expect(failure.path).toBe('days[0].celsius')
    expect(failure.message).toContain('days[0].celsius')
    expect(failure.text).toBe(wrongType)
    expect(failure.result?.reason).toEqual({ kind: 'completed' })
    expect(failure.result?.text).toBe(`not json at all\n${wrongType}`)
    expect(model.requests).toHaveLength(2)
    const firstRepair = model.requests[1]?.messages.at(-1) as UserMessage
    expect((firstRepair.content[0] as { text: string }).text).toContain('(the answer): is not JSON')
    const end = agent.session.events.at(-1)
    expect(end?.data).toEqual({ turn: 1, reason: { kind: 'completed' } })
    await harness.close()
  })

  test('outputRepairs: 0 rejects at once; outputRepairs: 2 allows two repairs', async () => {
    const { model, harness, agent } = await setup([text('{}'), text('{}'), text('{"city":1}'), text(good)])
    const error = await agent.run('weather?', { output: Weather, outputRepairs: 0 }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OutputValidationError)
    expect((error as OutputValidationError).path).toBe('city')
    expect(model.requests).toHaveLength(1)
    const result = await agent.run('again', { output: Weather, outputRepairs: 2 })
    expect(result.output.city).toBe('Lyon')
    expect(model.requests).toHaveLength(4)
    await harness.close()
  })

  test('a turn cancelled before an answer rejects OutputValidationError naming the end reason', async () => {
    const { harness, agent } = await setup([hang('{"city":')])
    const controller = new AbortController()
    harness.on('session/event', ({ event }) => {
      if (event.type === 'assistant/chunk' && (event.data as { chunk: { type: string } }).chunk.type === 'text-delta')
        controller.abort()
    })
    const error = await agent.run('weather?', { output: Weather, signal: controller.signal }).then(
      () => undefined,
      (caught: unknown) => caught as OutputValidationError,
    )
    expect(OutputValidationError.is(error)).toBe(true)
    expect(error?.path).toBe('')
    expect(error?.message).toContain("the turn ended 'aborted'")
    expect(error?.result?.reason).toEqual({ kind: 'aborted', reason: { kind: 'user' } })
    expect(error?.text).toBe('{"city":')
    await harness.close()
  })

  test('tools run first in the same turn, then the final answer is the JSON', async () => {
    const { model, harness, agent } = await setup([tool('forecast', { city: 'Lyon' }), text(good)])
    const result = await agent.run('weather in Lyon?', { output: Weather })
    expect(result.output.days).toHaveLength(2)
    expect(model.requests).toHaveLength(2)
    expect(model.requests.every((request) => request.responseFormat !== undefined)).toBe(true)
    expect(model.requests[0]?.tools?.map((schema) => schema.name)).toEqual(['forecast'])
    expect(agent.session.events.filter((event) => event.type === 'tool/result')).toHaveLength(1)
    await harness.close()
  })

  test('a repair step counts in maxSteps: at the limit there is no repair left', async () => {
    const { model, harness, agent } = await setup([tool('forecast', { city: 'Lyon' }), text(wrongType)])
    const error = await agent.run('weather?', { output: Weather, maxSteps: 2 }).then(
      () => undefined,
      (caught: unknown) => caught as OutputValidationError,
    )
    expect(OutputValidationError.is(error)).toBe(true)
    expect(error?.result?.reason).toEqual({ kind: 'max-steps', limit: 2 })
    expect(model.requests.map((request) => request.toolChoice)).toEqual([undefined, 'none'])
    await harness.close()
  })

  test('a raw JSON Schema works: the request carries it as given and output is the parsed JSON', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'integer' } },
      required: ['answer'],
      additionalProperties: false,
    } as const
    const { model, harness, agent } = await setup([text('{"answer":"forty-two"}'), text('{"answer":42}')])
    const result = await agent.run('the answer?', { output: schema })
    expectTypeOf(result.output).toEqualTypeOf<JsonValue>()
    expect(result.output).toEqual({ answer: 42 })
    expect(model.requests[0]?.responseFormat).toEqual({ type: 'json', schema })
    const repair = model.requests[1]?.messages.at(-1) as UserMessage
    expect((repair.content[0] as { text: string }).text).toContain('answer:')
    await harness.close()
  })

  test('a follow-up turn without output drops the responseFormat (a header change)', async () => {
    const { model, harness, agent } = await setup([text(good), text('plain'), text('bye')])
    await agent.run('weather?', { output: Weather })
    const plain: TurnResult = await agent.run('thanks')
    expect(plain.text).toBe('plain')
    expect(plain).not.toHaveProperty('output')
    const unstructured = await agent.run('bye', { maxSteps: 3 }).catch(() => undefined)
    // @ts-expect-error a run without output has no output field
    void unstructured?.output
    expect(model.requests[1]).not.toHaveProperty('responseFormat')
    await harness.close()
  })

  test('stream() with output types and settles its result the same way', async () => {
    const { harness, agent } = await setup([text(good)])
    const run = agent.stream('weather?', { output: Weather })
    const types: string[] = []
    for await (const event of run) types.push(event.type)
    const result = await run.result
    expectTypeOf(result.output).toEqualTypeOf<z.output<typeof Weather>>()
    expect(result.output.city).toBe('Lyon')
    expect(types.at(-1)).toBe('turn/end')
    await harness.close()
  })

  test('rebuilt requests include responseFormat after a reopen', async () => {
    const { model, harness, agent } = await setup([tool('forecast', { city: 'Lyon' }), text(wrongType), text(good)])
    await agent.run('weather?', { output: Weather })
    const id = agent.id
    const live = model.requests.map(withoutSignal)
    await harness.close()
    if (name !== 'jsonl') return
    const second = await createHarness({ model: scriptedModel([]), tools: [forecast], ...store(), ids: fakeIds() })
    const resumed = await second.resumeAgent(id)
    for (let step = 1; step <= 3; step++) {
      const rebuilt = rebuildRequest(resumed.session, { turn: 1, step })
      expect(rebuilt).toStrictEqual(live[step - 1])
      expect(rebuilt.responseFormat?.type).toBe('json')
    }
    await second.close()
  })
})

describe('bad output values', () => {
  const bad: readonly [string, unknown][] = [
    ['a string', 'json'],
    ['a number', 42],
    ['null', null],
    ['an array', [{ type: 'string' }]],
    ['a function', () => ({})],
    ['a zod shape instead of a schema', { city: z.string() }],
    ['a schema with no JSON Schema form', z.date()],
    ['a JSON Schema with an external $ref', { $ref: 'https://example.com/schema.json' }],
  ]

  test.each(bad)('run() refuses %s with InvalidArgumentError, nothing queued', async (_name, value) => {
    const harness = await createHarness({ model: scriptedModel([]), ids: fakeIds() })
    const agent = await harness.createAgent()
    const before = agent.session.length
    const error = await agent.run('hi', { output: value as z.ZodType }).catch((caught: unknown) => caught)
    expect(InvalidArgumentError.is(error)).toBe(true)
    expect(error).toMatchObject({ argument: 'options.output' })
    expect(() => agent.stream('hi', { output: value as z.ZodType })).toThrow(InvalidArgumentError)
    expect(agent.session.length).toBe(before)
    expect(agent.inbox.hasPending).toBe(false)
    await harness.close()
  })

  test.each([
    ['negative', -1],
    ['non-integer', 0.5],
    ['a string', '1'],
  ])('outputRepairs %s is refused', async (_name, value) => {
    const harness = await createHarness({ model: scriptedModel([]) })
    const agent = await harness.createAgent()
    const error = await agent
      .run('hi', { output: Weather, outputRepairs: value as number })
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ argument: 'options.outputRepairs', value })
    await harness.close()
  })

  test('outputRepairs without output is refused', async () => {
    const harness = await createHarness({ model: scriptedModel([]) })
    const agent = await harness.createAgent()
    const error = await agent
      .run('hi', { outputRepairs: 1 } as Parameters<typeof agent.run>[1])
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ argument: 'options.outputRepairs', reason: 'is allowed only with output' })
    await harness.close()
  })
})

describe('a queued structured run across a restart', () => {
  test('the resumed turn carries the logged responseFormat and repairs with the JSON Schema', async () => {
    const ids = fakeIds()
    const first = await createHarness({ persistence: { dir }, model: scriptedModel([hang()]), clock: fakeClock(), ids })
    const agent = await first.createAgent()
    const requested = new Promise<void>((resolve) => {
      first.on('session/event', ({ event }) => {
        if (event.type === 'request/header') resolve()
      })
    })
    agent.followup('one')
    await requested
    const queued = agent.run('weather?', { output: Weather }).catch((error: unknown) => error)
    const id = agent.id
    await first.close()
    expect(await queued).toMatchObject({ reason: 'disposed' })

    const model = scriptedModel([text(wrongType), text(good)])
    const second = await createHarness({ persistence: { dir }, model, clock: fakeClock(), ids })
    const resumed = await second.resumeAgent(id, { options: { verifyReconstruction: true } })
    expect(resumed.wake()).toBe(true)
    await resumed.whenIdle()
    expect(model.requests).toHaveLength(2)
    expect(model.requests[0]?.responseFormat?.schema).toMatchObject({ type: 'object' })
    const repair = model.requests[1]?.messages.at(-1) as UserMessage
    expect((repair.content[0] as { text: string }).text).toContain('days[0].celsius')
    model.assertComplete()
    await second.close()
  })
})
