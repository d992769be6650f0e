/**
 * Shared setup and short helpers of the system-prompt suites: a
 * harness with a fixed clock and ids, agents A and B as scoped child contexts of the root
 * (stand-ins until the agent loop lands), `P(ctx)`, `asm(X)` and `render(a)`.
 *
 * @module
 */
import { afterEach } from 'vitest'
import {
  type Context,
  createHarness,
  type Harness,
  type HarnessOptions,
  renderPrompt,
  type ScopeKey,
  services,
  type SystemPrompt,
} from 'yoke'
import type { PromptAssembly } from '../../src/prompt/index.js'
import { fakeClock, fakeIds } from 'yoke/testing'
import { type RecordingLogger, recordingLogger } from '../helpers/recording-logger.js'

/** One scenario's harness and its notation. */
export interface PromptWorld {
  readonly harness: Harness
  /** The harness root context. */
  readonly root: Context
  readonly logger: RecordingLogger
  /** Agent A's stand-in: `root.child('agent-a', { scope: keyA })`. */
  readonly A: Context
  /** Agent B's stand-in: `root.child('agent-b', { scope: keyB })`. */
  readonly B: Context
  readonly keyA: ScopeKey
  readonly keyB: ScopeKey
  /** The signal every `asm` passes. */
  readonly signal: AbortSignal
  /** `asm(X) = P(root).assemble({ scope: X, signal })`; no scope → the global layer only. */
  asm(scope?: ScopeKey): Promise<PromptAssembly>
}

const open: Harness[] = []

afterEach(async () => {
  for (const harness of open.splice(0).reverse()) await harness.close()
})

/** `P(ctx)`: the system prompt bound to `ctx`. */
export function P(ctx: Context): SystemPrompt {
  return ctx.get(services.systemPrompt)
}

/** `render(a) = renderPrompt(a.sections, a.variables)`. */
export function render(assembly: PromptAssembly): string {
  return renderPrompt(assembly.sections, assembly.variables)
}

/** The names of a list of named things, in order. */
export function names(list: readonly { readonly name: string }[]): string[] {
  return list.map((item) => item.name)
}

/** Builds a harness (closed after the test) with agents A and B. */
export async function promptWorld(options: HarnessOptions = {}): Promise<PromptWorld> {
  const logger = recordingLogger()
  const harness = await createHarness({ clock: fakeClock({ now: 0 }), ids: fakeIds(), logger, ...options })
  open.push(harness)
  const root = harness.ctx
  const keyA = { agent: 'A' }
  const keyB = { agent: 'B' }
  const signal = new AbortController().signal
  return {
    harness,
    root,
    logger,
    A: root.child('agent-a', { scope: keyA }),
    B: root.child('agent-b', { scope: keyB }),
    keyA,
    keyB,
    signal,
    asm: (scope) => P(root).assemble(scope === undefined ? { signal } : { scope, signal }),
  }
}
