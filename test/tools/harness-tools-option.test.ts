/**
 * The harness `tools` option (registered globally by the `tools` entry) and the tool
 * registry's `knownNames`, which prompt assembly uses so `toolOrder` may name a restricted tool.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createHarness, defineTool, type Harness, InvalidOptionsError } from 'yoke'
import { rejectionOf } from '../helpers/outcomes.js'

const read = defineTool({
  name: 'read',
  description: 'Read a file',
  input: z.object({ path: z.string() }),
  execute: () => 'ok',
})
const bash = defineTool({
  name: 'bash',
  description: 'Run a command',
  input: z.object({ command: z.string() }),
  execute: () => 'ok',
})

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

test('createHarness({ tools }) registers them in the global layer', async () => {
  harness = await createHarness({ tools: [read, bash] })
  expect(harness.tools.list().map((tool) => tool.name)).toEqual(['bash', 'read'])
  expect(harness.tools.schemas().map((schema) => schema.name)).toEqual(['bash', 'read'])
})

test('a repeated name or a value that is not a definition is an options issue naming its index', async () => {
  const repeated = await rejectionOf(createHarness({ tools: [read, read] }))
  expect(InvalidOptionsError.is(repeated)).toBe(true)
  expect((repeated as InvalidOptionsError).issues[0]?.path).toEqual(['tools', 1, 'name'])
  const bogus = await rejectionOf(createHarness({ tools: [read, { name: 'x' } as never] }))
  expect(InvalidOptionsError.is(bogus)).toBe(true)
  expect((bogus as InvalidOptionsError).issues[0]?.path).toEqual(['tools', 1])
})

test('knownNames lists restricted tools too; toolOrder naming a restricted tool leaves it absent', async () => {
  harness = await createHarness({
    tools: [read, bash],
    patches: [{ id: 'system-prompt', merge: { toolOrder: ['bash', '*'] } }],
  })
  const key = { agent: 'a' }
  const agent = harness.ctx.child('agent-a', { scope: key })
  harness.tools.restrict(key, { deny: ['bash'] })
  expect(harness.tools.knownNames(key)).toEqual(['bash', 'read'])
  expect(harness.tools.list(key).map((tool) => tool.name)).toEqual(['read'])
  const assembly = await agent.systemPrompt.assemble({ scope: key, signal: new AbortController().signal })
  expect(assembly.tools.map((tool) => tool.name)).toEqual(['read'])
  const global = await harness.ctx.systemPrompt.assemble({ signal: new AbortController().signal })
  expect(global.tools.map((tool) => tool.name)).toEqual(['bash', 'read'])
})
