/**
 * The persistence conformance suite: one set of tests every
 * `PersistenceAdapter` must pass, registered with any test runner. Imports no test runner;
 * asserts with `node:assert/strict`.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { PersistenceAdapter } from '../persistence/persistence-adapter.js'
import type { ConformanceCase, ConformanceContext, ConformanceHook } from './conformance/conformance-support.js'
import type { ConformanceRunner, ConformanceTarget } from './conformance/conformance-target.js'
import { appendCases } from './conformance/append-cases.js'
import { damageCases } from './conformance/damage-cases.js'
import { leaseCases } from './conformance/lease-cases.js'
import { pidReuseCases } from './conformance/pid-reuse-cases.js'
import { processCases } from './conformance/process-cases.js'
import { readCases } from './conformance/read-cases.js'
import type { serveConformanceWriter } from './serve-conformance-writer.js'

export type { ConformanceBytes, ConformanceRunner, ConformanceTarget } from './conformance/conformance-target.js'

/** Options of {@link runPersistenceConformance}. */
export interface PersistenceConformanceOptions {
  /**
   * The runner to register with.
   *
   * @default the global `describe` and `test` (`it`), with `test.skip` for skipped tests
   */
  readonly runner?: ConformanceRunner
  /**
   * How many events the large-batch test appends in one call.
   *
   * @default 150_000
   */
  readonly largeBatch?: number
}

/** Every case, in registration order. */
const cases: readonly ConformanceCase[] = [
  ...appendCases,
  ...readCases,
  ...damageCases,
  ...leaseCases,
  ...pidReuseCases,
  ...processCases,
]

interface RunnerFunction {
  (name: string, body: () => unknown, timeoutMs?: number): unknown
  readonly skip?: unknown
}

function isRunnerFunction(value: unknown): value is RunnerFunction {
  return typeof value === 'function'
}

/** The global `describe`/`test` of the running test framework, as a {@link ConformanceRunner}. */
function globalRunner(): ConformanceRunner {
  const scope = globalThis as { readonly describe?: unknown; readonly test?: unknown; readonly it?: unknown }
  const describe = scope.describe
  const test = isRunnerFunction(scope.test) ? scope.test : scope.it
  if (!isRunnerFunction(describe) || !isRunnerFunction(test)) {
    throw new InvalidArgumentError({
      argument: 'options.runner',
      reason:
        'no runner was given and no global describe/test exists; pass { runner: { describe, test } } or enable the test globals',
    })
  }
  const skip = test.skip
  const runner: ConformanceRunner = {
    describe: (name, body) => void describe(name, body),
    test: (name, body, timeoutMs) => void (timeoutMs === undefined ? test(name, body) : test(name, body, timeoutMs)),
  }
  if (isRunnerFunction(skip)) {
    return { ...runner, skip: (name, reason) => void skip.call(test, `${name} (${reason})`, () => undefined) }
  }
  return runner
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { readonly then?: unknown } | null)?.then === 'function'
}

/** Whether `target` has `hook`. */
function hasHook(target: ConformanceTarget, hook: ConformanceHook): boolean {
  switch (hook) {
    case 'bytes':
      return typeof target.bytes?.read === 'function' && typeof target.bytes.write === 'function'
    case 'damageRecord':
      return typeof target.damageRecord === 'function'
    case 'expireLease':
      return typeof target.expireLease === 'function'
    case 'ageLease':
      return typeof target.ageLease === 'function'
    case 'plantLease':
      return typeof target.plantLease === 'function'
    case 'spawnWriter':
      return typeof target.spawnWriter === 'function'
    case 'adapter.readFrom':
      return typeof target.adapter.readFrom === 'function'
    case 'adapter.delete':
      return typeof target.adapter.delete === 'function'
  }
}

/** Closes a target's adapter and cleans it up, keeping the first error. */
async function dispose(target: ConformanceTarget, adapters: readonly PersistenceAdapter[]): Promise<unknown[]> {
  const errors: unknown[] = []
  for (const adapter of adapters) {
    try {
      await adapter.close()
    } catch (error) {
      errors.push(error)
    }
  }
  try {
    await target.cleanup?.()
  } catch (error) {
    errors.push(error)
  }
  return errors
}

/** Runs one case over a fresh target, then closes every instance it opened and cleans up. */
async function runCase(
  testCase: ConformanceCase,
  makeTarget: () => ConformanceTarget | Promise<ConformanceTarget>,
  largeBatch: number,
): Promise<void> {
  const target = await makeTarget()
  const opened: PersistenceAdapter[] = [target.adapter]
  const context: ConformanceContext = {
    target,
    adapter: target.adapter,
    largeBatch,
    reopen: async () => {
      const adapter = await target.reopen()
      opened.push(adapter)
      return adapter
    },
  }
  let failure: { readonly error: unknown } | undefined
  try {
    const missing = testCase.needs.filter((hook) => !hasHook(target, hook))
    if (missing.length > 0)
      throw new Error(`makeTarget returned a target without ${missing.join(', ')}, unlike the one made at registration`)
    await testCase.run(context)
  } catch (error) {
    failure = { error }
  }
  const errors = await dispose(target, opened)
  if (failure !== undefined) throw failure.error
  if (errors.length > 0) throw errors[0]
}

/** Registers every case, skipping those whose hooks `probe` lacks. */
function register(
  runner: ConformanceRunner,
  probe: ConformanceTarget,
  makeTarget: () => ConformanceTarget | Promise<ConformanceTarget>,
  largeBatch: number,
): void {
  for (const testCase of cases) {
    const missing = testCase.needs.filter((hook) => !hasHook(probe, hook))
    if (missing.length === 0) {
      runner.test(testCase.name, () => runCase(testCase, makeTarget, largeBatch), testCase.timeoutMs)
      continue
    }
    const why = missing.includes('spawnWriter') ? ' (no child process over the same storage)' : ''
    const reason = `skipped: the target has no ${missing.join(' and no ')}${why}`
    if (runner.skip !== undefined) runner.skip(testCase.name, reason)
    else runner.test(`${testCase.name} (${reason})`, async () => undefined)
  }
}

/**
 * Registers the persistence conformance suite for an adapter: contiguity
 * and the order of the append checks, idempotent re-append (a batch already stored, sent again at
 * its `expectedSeq`, resolves without duplicating; another batch there is a `SeqConflictError`),
 * durability across instances, a torn tail at every byte offset, corruption detection, repair
 * idempotence, fork header lineage, lock exclusion, fencing after lease loss, the lease model
 * (takeover after expiry, racing first opens and takeovers: exactly one wins and the loser names
 * it), pid reuse (a lease left with our own pid and host is judged by its heartbeat alone), a
 * writer process frozen past its TTL (SIGSTOP, takeover, SIGCONT: it writes nothing more and
 * learns `LeaseLostError`), SIGKILL mid-append and mid-turn (a reopened instance loads every
 * acknowledged event, balanced after repair), large batches, unicode, byte-exact records,
 * revisions, load, list, readFrom, delete and close.
 *
 * Hooks of the target unlock cases: `bytes` (torn tails, damaged headers), `damageRecord`
 * (corruption), `expireLease` and `ageLease` (fencing, takeovers), `plantLease` (pid reuse) and
 * `spawnWriter` (a child process running {@link serveConformanceWriter} over the same storage:
 * the frozen-writer and crash cases).
 *
 * `makeTarget` is called once per test and must return fresh, empty storage; it is also called
 * once while registering, to see which hooks exist (that target is closed and cleaned up at
 * once). A test whose hook is missing is registered as skipped, naming the hook. Each test
 * closes the adapters it used and calls `cleanup`.
 *
 * @param name - the name of the `describe` group, e.g. the adapter's
 * @param makeTarget - makes an adapter over fresh storage, with `reopen` and the optional hooks
 * @param options - the runner (default: the global `describe`/`test`) and the large-batch size
 * @throws `InvalidArgumentError` for a bad argument, or when no runner is given and none is global
 * @example
 * ```ts
 * import { describe, test } from 'vitest'
 * import { createMemoryStore, memoryPersistence } from 'yoke'
 * import { runPersistenceConformance } from 'yoke/testing'
 *
 * runPersistenceConformance(
 *   'memoryPersistence',
 *   () => {
 *     const store = createMemoryStore()
 *     return {
 *       adapter: memoryPersistence({ store }),
 *       reopen: () => memoryPersistence({ store }),
 *       bytes: { read: (id) => store.read(id) ?? new Uint8Array(), write: (id, bytes) => store.write(id, bytes) },
 *       expireLease: (id) => void store.expireLease(id),
 *       plantLease: (id, holder) => store.plantLease(id, holder),
 *       // no spawnWriter: a memory store dies with its process, so those cases are skipped
 *     }
 *   },
 *   { runner: { describe, test, skip: (name, reason) => test.skip(`${name} (${reason})`, () => {}) } },
 * )
 * ```
 */
export function runPersistenceConformance(
  name: string,
  makeTarget: () => ConformanceTarget | Promise<ConformanceTarget>,
  options: PersistenceConformanceOptions = {},
): void {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidArgumentError({ argument: 'name', reason: 'must be a non-empty string', value: name })
  }
  if (typeof makeTarget !== 'function') {
    throw new InvalidArgumentError({
      argument: 'makeTarget',
      reason: 'must be a function returning a ConformanceTarget',
      value: makeTarget,
    })
  }
  const largeBatch = options.largeBatch ?? 150_000
  if (!(Number.isSafeInteger(largeBatch) && largeBatch > 0)) {
    throw new InvalidArgumentError({
      argument: 'options.largeBatch',
      reason: 'must be a positive safe integer',
      value: largeBatch,
    })
  }
  const runner = options.runner ?? globalRunner()
  runner.describe(name, () => {
    const probe = makeTarget()
    if (isPromiseLike(probe)) {
      return Promise.resolve(probe).then(async (target) => {
        register(runner, target, makeTarget, largeBatch)
        await dispose(target, [target.adapter])
      })
    }
    register(runner, probe, makeTarget, largeBatch)
    void dispose(probe, [probe.adapter])
    return undefined
  })
}
