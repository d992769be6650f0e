/**
 * The code blocks of docs/extending.md, run with the pieces around them filled in; a list of the
 * blocks' first lines makes a new or changed block fail here until it is tested too. The page's
 * complete example, examples/kernel-plugin.ts, runs here as well.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test, vi } from 'vitest'
import { z } from 'zod'
import { createHarness, definePlugin, defineService, defineTool, describeHarness } from 'yoke'
import { fakeClock, fakeIds, scriptedModel, text } from 'yoke/testing'
import { root } from '../helpers/child-process.js'
import { recordingLogger } from '../helpers/recording-logger.js'

const page = readFileSync(join(root, 'docs', 'extending.md'), 'utf8')

test('every TypeScript block of docs/extending.md is one this file runs', () => {
  const firstLines = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]?.split('\n')[0])
  expect(firstLines).toEqual([
    "import { createHarness, definePlugin, defineService } from 'yoke'",
    "import { z } from 'zod'",
    'const harness = await createHarness({',
  ])
})

test('the kernel in one minute: a greeter service, its entry, and its cleanup on close', async () => {
  interface Greeter {
    greet(name: string): string
  }
  const GreeterKey = defineService<Greeter>('greeter/service')
  const stopped: string[] = []
  const greeter = definePlugin({
    name: 'greeter',
    provides: [GreeterKey],
    apply(ctx) {
      ctx.provide(GreeterKey, { greet: (name) => `hello, ${name}` })
      return () => {
        stopped.push('greeter')
      }
    },
  })
  {
    await using harness = await createHarness({
      plugins: [greeter],
      clock: fakeClock({ now: 0 }),
      ids: fakeIds(),
      logger: recordingLogger(),
    })
    expect(harness.ctx.get(GreeterKey).greet('world')).toBe('hello, world')
    expect(harness.describe().entries.at(-1)?.id).toBe('greeter')
  }
  expect(stopped).toEqual(['greeter'])
})

test('the calendar plugin: its tool, its prompt section with the patched config, and its hook reach an agent', async () => {
  const today = defineTool({
    name: 'today',
    description: "Today's date, as YYYY-MM-DD.",
    input: z.object({}),
    isConcurrencySafe: () => true,
    execute: () => new Date(0).toISOString().slice(0, 10),
  })
  const ends: string[] = []
  const calendar = definePlugin({
    name: 'calendar',
    config: z.object({ timezone: z.string().default('UTC') }),
    apply(ctx, config) {
      ctx.tools.register(today)
      ctx.systemPrompt.section({ name: 'calendar', order: 100, text: `Dates are in ${config.timezone}.` })
      ctx.on('agent/turn-stopping', ({ turn, reason }) => {
        ends.push(`turn ${turn} ends: ${reason.kind}`)
      })
    },
  })
  const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'today', arguments: {} }] }, text('It is 1970-01-01.')])
  {
    await using harness = await createHarness({
      plugins: [calendar],
      patches: [{ id: 'calendar', merge: { timezone: 'Europe/Paris' } }],
      model,
      clock: fakeClock({ now: 0 }),
      ids: fakeIds(),
    })
    const agent = await harness.createAgent()
    expect(await agent.run('what day is it?')).toMatchObject({ text: 'It is 1970-01-01.' })
    const request = model.requests[0]
    expect(request?.system).toContain('Dates are in Europe/Paris.')
    expect(request?.tools?.map((tool) => tool.name)).toEqual(['today'])
    expect(ends).toEqual(['turn 1 ends: completed'])
    const results = agent.session.events.filter((event) => event.type === 'tool/result')
    expect(JSON.stringify(results[0]?.data)).toContain('1970-01-01')
  }
})

test('composing a harness: merge, disable and insert patches, as describeHarness plans them', () => {
  const counters = definePlugin({ name: 'counters', config: z.object({ max: z.number().default(3) }), apply() {} })
  const billing = definePlugin({ name: 'billing', apply() {} })
  const audit = definePlugin({ name: 'audit', apply() {} })
  const description = describeHarness({
    plugins: [counters, billing],
    patches: [
      { id: 'counters', merge: { max: 5 } },
      { id: 'retry', disabled: true },
      { id: 'audit', plugin: audit, before: 'agent-loop' },
    ],
  })
  const entries = description.entries
  const ids = entries.map((entry) => entry.id)
  expect(ids.indexOf('audit')).toBe(ids.indexOf('agent-loop') - 1)
  expect(entries.find((entry) => entry.id === 'counters')?.config).toEqual({ max: 5 })
  expect(entries.find((entry) => entry.id === 'retry')?.disabled).toBe(true)
})

afterEach(() => {
  vi.restoreAllMocks()
})

test('examples/kernel-plugin.ts, which the page points to, prints the start order, the event answer and the teardown', async () => {
  const lines: string[] = []
  vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
    lines.push(parts.map(String).join(' '))
  })
  await import('../../examples/kernel-plugin.js')
  expect(lines).toEqual([
    'counters started (max 5)',
    'billing tracks invoices, refunds',
    'start order: counters → billing',
    'may invoices reach 7? false',
    'billing state: active',
    'closed; every counter registration was undone with its plugin',
  ])
})
