import { afterEach, describe, expect, test } from 'vitest'
import { InvalidArgumentError, memoryPersistence, type PersistenceAdapter, PersistenceError } from 'yoke'
import { createMemoryStore } from '../../src/persistence/index.js'
import { runPersistenceConformance } from 'yoke/testing'
import type { ConformanceRunner, ConformanceTarget } from '../../src/testing/run-persistence-conformance.js'
import { rejectionOf } from '../helpers/outcomes.js'

interface Recorded {
  readonly groups: string[]
  readonly tests: {
    readonly name: string
    readonly body: () => Promise<void>
    readonly timeoutMs: number | undefined
  }[]
  readonly skipped: { readonly name: string; readonly reason: string }[]
  pending: Promise<void> | undefined
}

/** A runner that records what the suite registers; `describe` keeps an async body's promise. */
function recordingRunner(withSkip = true): { runner: ConformanceRunner; recorded: Recorded } {
  const recorded: Recorded = { groups: [], tests: [], skipped: [], pending: undefined }
  const runner: ConformanceRunner = {
    describe: (name, body) => {
      recorded.groups.push(name)
      const result = body()
      if (result !== undefined) recorded.pending = result
    },
    test: (name, body, timeoutMs) => void recorded.tests.push({ name, body, timeoutMs }),
    ...(withSkip ? { skip: (name: string, reason: string) => void recorded.skipped.push({ name, reason }) } : {}),
  }
  return { runner, recorded }
}

/** A memory target with no hooks, over an adapter without the optional methods. */
function bareTarget(onCleanup: () => void = () => undefined): ConformanceTarget {
  const store = createMemoryStore()
  const bare = (): PersistenceAdapter => {
    const inner = memoryPersistence({ store })
    return {
      name: 'bare',
      create: (header) => inner.create(header),
      append: (id, events, options) => inner.append(id, events, options),
      load: (id, options) => inner.load(id, options),
      commitRepair: (id, torn, closers) => inner.commitRepair(id, torn, closers),
      list: (options) => inner.list(options),
      acquire: (id) => inner.acquire(id),
      close: () => inner.close(),
    }
  }
  return { adapter: bare(), reopen: bare, cleanup: onCleanup }
}

const scope = globalThis as Record<string, unknown>

afterEach(() => {
  delete scope['describe']
  delete scope['test']
})

describe('runPersistenceConformance', () => {
  test('registers one describe group whose hook-less tests are skipped, naming the missing hook', () => {
    const { runner, recorded } = recordingRunner()
    runPersistenceConformance('bare', () => bareTarget(), { runner })
    expect(recorded.groups).toEqual(['bare'])
    expect(recorded.tests.length).toBeGreaterThan(10)
    const reasons = recorded.skipped.map((entry) => entry.reason)
    expect(reasons).toContain('skipped: the target has no bytes')
    expect(reasons).toContain('skipped: the target has no damageRecord')
    expect(reasons).toContain('skipped: the target has no expireLease')
    expect(reasons).toContain('skipped: the target has no adapter.readFrom')
    expect(reasons).toContain('skipped: the target has no adapter.delete')
    expect(reasons).toContain('skipped: the target has no bytes and no adapter.readFrom')
    expect(reasons).toContain('skipped: the target has no plantLease')
    expect(reasons).toContain('skipped: the target has no spawnWriter (no child process over the same storage)')
    const names = [...recorded.tests.map((entry) => entry.name), ...recorded.skipped.map((entry) => entry.name)]
    expect(new Set(names).size).toBe(names.length)
  })

  test('an async makeTarget registers from the describe body once the target resolves', async () => {
    const { runner, recorded } = recordingRunner()
    runPersistenceConformance('async', async () => bareTarget(), { runner })
    expect(recorded.tests).toEqual([])
    await recorded.pending
    expect(recorded.tests.length).toBeGreaterThan(10)
  })

  test('without skip, a skipped test is registered as a passing test that says why', async () => {
    const { runner, recorded } = recordingRunner(false)
    runPersistenceConformance('no skip', () => bareTarget(), { runner })
    const skipped = recorded.tests.filter((entry) => entry.name.includes('(skipped: the target has no bytes)'))
    expect(skipped.length).toBeGreaterThan(0)
    await skipped[0]!.body()
  })

  test('a test runs over a fresh target, then closes every instance and cleans up', async () => {
    const { runner, recorded } = recordingRunner()
    const targets: ConformanceTarget[] = []
    let cleanups = 0
    runPersistenceConformance(
      'lifecycle',
      () => {
        const target = bareTarget(() => void cleanups++)
        targets.push(target)
        return target
      },
      { runner },
    )
    const durability = recorded.tests.find((entry) => entry.name.includes('(durability)'))!
    expect(durability.timeoutMs).toBeUndefined()
    await durability.body()
    expect(targets).toHaveLength(2)
    expect(cleanups).toBe(2)
    const error = await rejectionOf(targets[1]!.adapter.list())
    expect(PersistenceError.is(error) && error.code).toBe('CLOSED')
    expect(recorded.tests.find((entry) => entry.name.includes('large batch'))?.timeoutMs).toBeGreaterThan(20_000)
  })

  test('without a runner it uses the global describe and test, and test.skip for skipped tests', () => {
    const groups: string[] = []
    const tests: string[] = []
    const skipped: string[] = []
    const globalTest = Object.assign((name: string) => void tests.push(name), {
      skip: (name: string) => void skipped.push(name),
    })
    scope['describe'] = (name: string, body: () => void) => {
      groups.push(name)
      body()
    }
    scope['test'] = globalTest
    runPersistenceConformance('globals', () => bareTarget())
    expect(groups).toEqual(['globals'])
    expect(tests.length).toBeGreaterThan(10)
    expect(skipped.some((name) => name.endsWith('(skipped: the target has no expireLease)'))).toBe(true)
  })

  test('without a runner or globals, or with a bad argument, it throws InvalidArgumentError', () => {
    const cases: [string, () => void][] = [
      ['options.runner', () => runPersistenceConformance('none', () => bareTarget())],
      [
        'options.largeBatch',
        () => runPersistenceConformance('x', () => bareTarget(), { largeBatch: 0, runner: recordingRunner().runner }),
      ],
      ['name', () => runPersistenceConformance('', () => bareTarget(), { runner: recordingRunner().runner })],
    ]
    for (const [argument, call] of cases) {
      let caught: unknown
      try {
        call()
      } catch (error) {
        caught = error
      }
      expect(InvalidArgumentError.is(caught) && caught.argument).toBe(argument)
    }
  })
})
