/**
 * Test helpers (`yoke/testing`): deterministic clock and ids. Imports no test runner.
 *
 * @example
 * ```ts
 * import { createHarness } from 'yoke'
 * import { fakeClock, fakeIds } from 'yoke/testing'
 *
 * const harness = await createHarness({ clock: fakeClock({ now: 0 }), ids: fakeIds() })
 * ```
 *
 * @module
 */
export { type FakeClock, type FakeClockOptions, fakeClock, type PendingTimer } from './fake-clock.js'
export type { ScriptedReply, ScriptedToolCall } from './scripted-reply.js'
export { type FakeIdsOptions, fakeIds } from './fake-ids.js'
export {
  type FaultyPersistence,
  type FaultyPersistenceOptions,
  faultyPersistence,
  type PersistenceCall,
} from './faulty-persistence.js'
export {
  type ConformanceBytes,
  type ConformanceRunner,
  type ConformanceTarget,
  type PersistenceConformanceOptions,
  runPersistenceConformance,
} from './run-persistence-conformance.js'
