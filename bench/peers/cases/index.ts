/**
 * The runtimes of the turn cases, by case name. Each is imported only by the child that runs it, so
 * a child's peak RSS holds one runtime's modules, not all of them.
 */
import type { Runtime } from './case.js'

/** The extra harness options of the `yoke-jsonl-turn` case: the durability mode the issue asks for. */
export const TURN_DURABILITY = { durability: 'turn' }

export const runtimes = {
  pi: async () => (await import('./pi.js')).piRuntime(),
  'ai-sdk': async () => (await import('./ai-sdk.js')).aiSdkRuntime(),
  'openai-agents': async () => (await import('./openai-agents.js')).openaiAgentsRuntime(),
  langgraph: async () => (await import('./langgraph.js')).langGraphRuntime(),
  'yoke-memory': async () => (await import('./yoke.js')).yokeRuntime('memory'),
  'yoke-jsonl': async () => (await import('./yoke.js')).yokeRuntime('jsonl'),
  'yoke-jsonl-turn': async () => (await import('./yoke.js')).yokeRuntime('jsonl', { extra: TURN_DURABILITY }),
  floor: async () => (await import('./floor.js')).floorRuntime(),
} as const satisfies Record<string, () => Promise<Runtime>>

/** A turn case's name. */
export type RuntimeName = keyof typeof runtimes
