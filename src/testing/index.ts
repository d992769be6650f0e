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
export { type FakeClock, type FakeClockOptions, fakeClock } from './fake-clock.js'
export type { ScriptedReply } from './scripted-reply.js'
export { type ScriptEntry, type ScriptedModel, type ScriptedModelOptions, scriptedModel } from './scripted-model.js'
export { call, cut, type FailFields, fail, hang, text, tool } from './script-builders.js'
export { type MockOpenAIServer, type MockOpenAIServerOptions, startMockOpenAIServer } from './mock-openai-server.js'
export type { MockScript } from './mock-openai/mock-script.js'
export type { MockStep } from './mock-openai/mock-step.js'
export { type FakeIdsOptions, fakeIds } from './fake-ids.js'
export { type FaultyPersistence, type FaultyPersistenceOptions, faultyPersistence } from './faulty-persistence.js'
export { type PersistenceConformanceOptions, runPersistenceConformance } from './run-persistence-conformance.js'
export {
  type ConformanceWriterHarness,
  type ConformanceWriterHarnessOptions,
  type ConformanceWriterOptions,
  serveConformanceWriter,
} from './serve-conformance-writer.js'
export { injectSchedulerFault, type SchedulerFaultOptions } from './inject-scheduler-fault.js'
export { type TearingFileSystemOptions, tearingFileSystem } from './tearing-file-system.js'
