/**
 * Helpers of the tool registry suites: tool definitions by name, a harness with fake host
 * services, agents as scoped child contexts, and `tools/change` recording.
 *
 * @module
 */
import { afterEach } from 'vitest'
import {
  type Context,
  createHarness,
  defineTool,
  type Harness,
  type HarnessOptions,
  type ToolDefinition,
  type ToolSpec,
  type ToolsChangePayload,
} from 'yoke'
import { fakeClock, fakeIds } from 'yoke/testing'
import { type RecordingLogger, recordingLogger } from '../helpers/recording-logger.js'

/** A raw-JSON-Schema tool named `name` (empty object input), overlaid with `extra`. */
export function tool(name: string, extra: Partial<ToolSpec> = {}): ToolDefinition {
  return defineTool({
    name,
    description: `the ${name} tool`,
    input: { type: 'object' },
    execute: () => name,
    ...extra,
  } as ToolSpec)
}

/** Names of a definition or schema list, in order. */
export function namesOf(list: readonly { readonly name: string }[]): string[] {
  return list.map((entry) => entry.name)
}

const open: Harness[] = []

afterEach(async () => {
  for (const harness of open.splice(0)) await harness.close()
})

/** A harness with fake host services and a recording logger, closed after the test. */
export async function toolsHarness(
  options: HarnessOptions = {},
): Promise<{ harness: Harness; logger: RecordingLogger }> {
  const logger = recordingLogger()
  const harness = await createHarness({ logger, clock: fakeClock({ now: 0 }), ids: fakeIds(), ...options })
  open.push(harness)
  return { harness, logger }
}

/** An agent stand-in: a child context of `parent` tagged with a fresh scope key. */
export interface TestAgent {
  /** The agent's scope key. */
  readonly key: object
  /** Its context (`ctx.scope === key`). */
  readonly ctx: Context
}

/** Makes an agent stand-in under `parent` (the harness root by default). */
export function agentOf(parent: Context, label: string): TestAgent {
  const key = { agent: label }
  return { key, ctx: parent.child(label, { scope: key }) }
}

/** Records every `tools/change` `ctx` hears (untagged on the root: all of them). */
export function recordChanges(ctx: Context): ToolsChangePayload[] {
  const changes: ToolsChangePayload[] = []
  ctx.on('tools/change', (payload) => {
    changes.push(payload)
  })
  return changes
}
