/**
 * `createHarness()` and what it composes and returns.
 *
 * @module
 */
export { composeEntries } from './compose-entries.js'
export { createHarness } from './create-harness.js'
export { type DescribedEntry, describeHarness, type HarnessDescription } from './describe-harness.js'
export type {
  AgentOverrides,
  Harness,
  HarnessCloseOptions,
  HarnessForkOptions,
  ResumeOverrides,
  SessionHistory,
  SessionSummary,
} from './harness.js'
export type { HarnessOptions } from './harness-options.js'
export { services } from './services.js'
