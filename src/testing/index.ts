/**
 * Test helpers (`yoke/testing`): deterministic clock and ids, the scripted model, the mock
 * OpenAI-compatible server, the faulty persistence wrapper and the persistence conformance suite.
 * Imports no test runner.
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
export type { ScriptedFailure, ScriptedReply, ScriptedToolCall } from './scripted-reply.js'
export { type ScriptEntry, type ScriptedModel, type ScriptedModelOptions, scriptedModel } from './scripted-model.js'
export { call, cut, fail, hang, text, tool } from './script-builders.js'
export {
  type MockOpenAIServer,
  type MockOpenAIServerOptions,
  type MockRecordedRequest,
  startMockOpenAIServer,
} from './mock-openai-server.js'
export type { MockScript, MockScriptFunction } from './mock-openai/mock-script.js'
export type {
  MockAuthStep,
  MockConnectionResetStep,
  MockContextOverflowStep,
  MockEmptyStep,
  MockEventsStep,
  MockFaultStep,
  MockHttpStep,
  MockMalformedJsonStep,
  MockPartialEofStep,
  MockQuotaStep,
  MockRateLimitStep,
  MockServerErrorStep,
  MockStallStep,
  MockStep,
  MockStreamPrefix,
  MockWrongContentTypeStep,
} from './mock-openai/mock-step.js'
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
export { injectSchedulerFault, type SchedulerFaultOptions } from './inject-scheduler-fault.js'
export { type TearingFileSystem, type TearingFileSystemOptions, tearingFileSystem } from './tearing-file-system.js'
