import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { Context, ScopeKey } from 'yoke'
import type { ChildOptions, DispatchOptions } from '../../src/kernel/index.js'
import { testRoot } from '../helpers/root.js'

/** Lets `hops` rounds of microtasks pass (no timers). */
async function microtasks(hops: number): Promise<void> {
  for (let hop = 0; hop < hops; hop++) await Promise.resolve()
}

// ---------------------------------------------------------------------------------------------
// (a) Effects: LIFO teardown over a random tree
// ---------------------------------------------------------------------------------------------

type EffectOperationKind = 'effect' | 'async-effect' | 'child'

interface EffectOperation {
  /** Which context (by creation index, modulo the count so far) the operation goes through. */
  readonly target: number
  readonly kind: EffectOperationKind
  /** Microtask hops inside the cleanup (and inside an async setup). */
  readonly delay: number
  /** Whether the effect (or child) is disposed through its own disposer before the root. */
  readonly early: boolean
  /** The position of that early disposal among the early ones. */
  readonly rank: number
}

type ModelItem = { readonly kind: 'effect'; readonly id: number } | { readonly kind: 'child'; readonly context: number }

interface EarlyDisposal {
  readonly rank: number
  readonly item: ModelItem
  readonly dispose: () => Promise<unknown>
}

const effectOperation: fc.Arbitrary<EffectOperation> = fc.record({
  target: fc.nat(),
  kind: fc.constantFrom<EffectOperationKind>('effect', 'effect', 'async-effect', 'child'),
  delay: fc.integer({ min: 0, max: 4 }),
  early: fc.integer({ min: 0, max: 3 }).map((value) => value === 0),
  rank: fc.nat(),
})

/** Effect ids in the order a teardown of `contextIndex` must run them (reverse registration, children inline). */
function teardownOrder(models: readonly (readonly ModelItem[])[], contextIndex: number): number[] {
  const order: number[] = []
  const items = models[contextIndex] ?? []
  for (let position = items.length - 1; position >= 0; position--) {
    const item = items[position]!
    if (item.kind === 'effect') order.push(item.id)
    else order.push(...teardownOrder(models, item.context))
  }
  return order
}

function idsOf(models: readonly (readonly ModelItem[])[], item: ModelItem): number[] {
  return item.kind === 'effect' ? [item.id] : teardownOrder(models, item.context)
}

/** Checks a cleanup log is a sequence of non-overlapping start/end pairs and returns the ids in order. */
function sequentialIds(log: readonly string[]): number[] {
  const ids: number[] = []
  for (let index = 0; index < log.length; index += 2) {
    const start = log[index]!
    const end = log[index + 1]
    expect(start.startsWith('start ')).toBe(true)
    const id = Number(start.slice('start '.length))
    expect(end, `cleanup ${id} ended before the next started`).toBe(`end ${id}`)
    ids.push(id)
  }
  return ids
}

async function checkTeardown(operations: readonly EffectOperation[]): Promise<void> {
  const { root, logger } = testRoot()
  const contexts: Context[] = [root]
  const models: ModelItem[][] = [[]]
  const early: EarlyDisposal[] = []
  const disposedFlags: (() => boolean)[] = []
  const log: string[] = []
  let nextId = 0

  for (const operation of operations) {
    const target = operation.target % contexts.length
    const context = contexts[target]!
    if (operation.kind === 'child') {
      const index = contexts.length
      const child = context.child(`c${index}`)
      contexts.push(child)
      models.push([])
      const item: ModelItem = { kind: 'child', context: index }
      models[target]!.push(item)
      if (operation.early) early.push({ rank: operation.rank, item, dispose: () => child.dispose() })
      continue
    }
    const id = nextId++
    const cleanup = async (): Promise<void> => {
      log.push(`start ${id}`)
      await microtasks(operation.delay)
      log.push(`end ${id}`)
    }
    const disposer =
      operation.kind === 'effect'
        ? context.effect(() => cleanup, `e${id}`)
        : context.effect(async () => {
            await microtasks(operation.delay)
            return cleanup
          }, `e${id}`)
    disposedFlags.push(() => disposer.disposed)
    const item: ModelItem = { kind: 'effect', id }
    models[target]!.push(item)
    if (operation.early) early.push({ rank: operation.rank, item, dispose: disposer })
  }

  // Early disposals, in a random order; each removes its effect (or whole subtree) for good.
  const ranEarly = new Set<number>()
  for (const disposal of [...early].sort((left, right) => left.rank - right.rank)) {
    for (const id of idsOf(models, disposal.item)) ranEarly.add(id)
    await disposal.dispose()
  }
  const earlyIds = sequentialIds(log)
  expect(new Set(earlyIds).size).toBe(earlyIds.length)
  expect(new Set(earlyIds)).toEqual(ranEarly)
  log.length = 0

  const report = await root.dispose()

  const expected = teardownOrder(models, 0).filter((id) => !ranEarly.has(id))
  expect(sequentialIds(log)).toEqual(expected)
  expect([...earlyIds, ...expected].sort((left, right) => left - right)).toEqual(
    Array.from({ length: nextId }, (_, id) => id),
  )
  expect(report.errors).toEqual([])
  expect(logger.at('error')).toEqual([])
  for (const context of contexts) expect(context.state).toBe('disposed')
  for (const disposed of disposedFlags) expect(disposed()).toBe(true)
  // Disposing again is a no-op: nothing runs twice.
  log.length = 0
  await root.dispose()
  expect(log).toEqual([])
}

describe('effects teardown (property)', () => {
  test('disposing the root runs every remaining cleanup once, strictly LIFO, each awaited', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(effectOperation, { maxLength: 30 }), async (operations) => {
        await checkTeardown(operations)
      }),
      { numRuns: 150 },
    )
  })

  test('the model itself: a fixed interleaving tears down last-in first-out', async () => {
    // root: e0, child c1 { e1 (via c1) }, e2 on root, e3 on c1 → teardown e2, [c1: e3, e1], e0
    const { root } = testRoot()
    const log: string[] = []
    const record = (name: string) => () => () => {
      log.push(name)
    }
    root.effect(record('e0'))
    const child = root.child('c1')
    child.effect(record('e1'))
    root.effect(record('e2'))
    child.effect(record('e3'))
    await root.dispose()
    expect(log).toEqual(['e2', 'e3', 'e1', 'e0'])
    expect(
      teardownOrder(
        [
          [
            { kind: 'effect', id: 0 },
            { kind: 'child', context: 1 },
            { kind: 'effect', id: 2 },
          ],
          [
            { kind: 'effect', id: 1 },
            { kind: 'effect', id: 3 },
          ],
        ],
        0,
      ),
    ).toEqual([2, 3, 1, 0])
  })
})

// ---------------------------------------------------------------------------------------------
// (b) Event admission by scope chains
// ---------------------------------------------------------------------------------------------

interface ListenerSpec {
  /** Register on the root itself (untagged). */
  readonly onRoot: boolean
  /** The scope tag of the outer child context, if any. */
  readonly outer: number | undefined
  /** Whether the listener goes through a grandchild of the outer context. */
  readonly nested: boolean
  /** The grandchild's own tag (shadows the outer one), if any. */
  readonly inner: number | undefined
}

interface DispatchSpec {
  readonly scope: number | undefined
  /** Which context dispatches (by index; admission must not depend on it). */
  readonly via: number
}

interface AdmissionCase {
  readonly keyCount: number
  /** `parents[i]` is undefined or an index below `i`, so the links form a forest. */
  readonly parents: readonly (number | undefined)[]
  /** The order the links are made in. */
  readonly linkRanks: readonly number[]
  readonly listeners: readonly ListenerSpec[]
  readonly dispatches: readonly DispatchSpec[]
}

const admissionCase: fc.Arbitrary<AdmissionCase> = fc.integer({ min: 1, max: 8 }).chain((keyCount) => {
  const keyIndex = fc.option(fc.integer({ min: 0, max: keyCount - 1 }), { nil: undefined })
  return fc.record({
    keyCount: fc.constant(keyCount),
    parents: fc
      .array(fc.option(fc.nat(), { nil: undefined }), { minLength: keyCount, maxLength: keyCount })
      .map((raw) => raw.map((parent, index) => (parent === undefined || index === 0 ? undefined : parent % index))),
    linkRanks: fc.array(fc.nat(), { minLength: keyCount, maxLength: keyCount }),
    listeners: fc.array(
      fc.record({
        onRoot: fc.integer({ min: 0, max: 5 }).map((value) => value === 0),
        outer: keyIndex,
        nested: fc.boolean(),
        inner: keyIndex,
      }),
      { maxLength: 12 },
    ),
    dispatches: fc.array(fc.record({ scope: keyIndex, via: fc.nat() }), { minLength: 1, maxLength: 4 }),
  })
})

function modelChain(parents: readonly (number | undefined)[], start: number): number[] {
  const chain = [start]
  for (let current = parents[start]; current !== undefined; current = parents[current]) chain.push(current)
  return chain
}

function scopeOptions(keys: readonly ScopeKey[], index: number | undefined): ChildOptions {
  return index === undefined ? {} : { scope: keys[index]! }
}

type Mode = 'emit' | 'parallel' | 'serial' | 'waterfall'
const allModes: readonly Mode[] = ['emit', 'parallel', 'serial', 'waterfall']

async function checkAdmission(input: AdmissionCase): Promise<void> {
  const { root, logger } = testRoot()
  const keys: ScopeKey[] = Array.from({ length: input.keyCount }, (_, index) => ({ id: `k${index}` }))
  const order = keys.map((_, index) => index).sort((left, right) => input.linkRanks[left]! - input.linkRanks[right]!)
  for (const index of order) {
    const parent = input.parents[index]
    if (parent !== undefined) root.scopes.bindParent(keys[index]!, keys[parent]!)
  }
  for (let index = 0; index < keys.length; index++) {
    const chain = root.scopes.chain(keys[index]!).map((key) => keys.indexOf(key))
    expect(chain).toEqual(modelChain(input.parents, index))
  }

  const ran: Record<Mode, number[]> = { emit: [], parallel: [], serial: [], waterfall: [] }
  const contexts: Context[] = [root]
  const tags: (number | undefined)[] = []
  input.listeners.forEach((spec, listener) => {
    let context = root
    let tag: number | undefined
    if (!spec.onRoot) {
      context = root.child(`outer${listener}`, scopeOptions(keys, spec.outer))
      tag = spec.outer
      if (spec.nested) {
        context = context.child('inner', scopeOptions(keys, spec.inner))
        tag = spec.inner ?? spec.outer
      }
      contexts.push(context)
    }
    expect(context.scope).toBe(tag === undefined ? undefined : keys[tag])
    tags.push(tag)
    context.on('test/e', () => {
      ran.emit.push(listener)
    })
    context.on('test/p', async () => {
      await Promise.resolve()
      ran.parallel.push(listener)
    })
    context.on('test/s', () => {
      ran.serial.push(listener)
      return undefined
    })
    context.on('test/w', (_payload, next) => {
      ran.waterfall.push(listener)
      return next()
    })
  })

  for (const dispatch of input.dispatches) {
    for (const mode of allModes) ran[mode].length = 0
    const via = contexts[dispatch.via % contexts.length]!
    const options: DispatchOptions = scopeOptions(keys, dispatch.scope)
    via.emit('test/e', null, options)
    await via.parallel('test/p', null, options)
    expect(await via.serial('test/s', null, options)).toBeUndefined()
    expect(await via.waterfall('test/w', { n: 1 }, () => 'inner', options)).toBe('inner')

    const admitted = new Set(dispatch.scope === undefined ? [] : modelChain(input.parents, dispatch.scope))
    const expected = tags.flatMap((tag, listener) => (tag === undefined || admitted.has(tag) ? [listener] : []))
    for (const mode of allModes) expect(ran[mode], mode).toEqual(expected)
  }

  expect(logger.at('error')).toEqual([])
  await root.dispose()
}

describe('scoped event admission (property)', () => {
  test('a dispatch reaches untagged listeners plus those tagged within chain(S); none without a scope', async () => {
    await fc.assert(
      fc.asyncProperty(admissionCase, async (input) => {
        await checkAdmission(input)
      }),
      { numRuns: 150 },
    )
  })

  test('a fixed case: events flow up the chain, never down', async () => {
    const { root } = testRoot()
    const grandparent = { id: 'grandparent' }
    const parent = { id: 'parent' }
    const child = { id: 'child' }
    root.scopes.bindParent(child, parent)
    root.scopes.bindParent(parent, grandparent)
    const heard: string[] = []
    for (const [name, scope] of [
      ['grandparent', grandparent],
      ['parent', parent],
      ['child', child],
    ] as const) {
      root.child(name, { scope }).on('test/e', () => {
        heard.push(name)
      })
    }
    root.on('test/e', () => {
      heard.push('untagged')
    })
    root.emit('test/e', null, { scope: parent })
    expect(heard).toEqual(['grandparent', 'parent', 'untagged'])
    heard.length = 0
    root.emit('test/e', null)
    expect(heard).toEqual(['untagged'])
    await root.dispose()
  })
})
