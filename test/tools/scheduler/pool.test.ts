/**
 * The scheduler's grouping and pool: parallel siblings,
 * exclusive barriers, model-order commits with live results in completion order, the rolling cap,
 * and classification re-done right before each start.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import type { ToolResultMessage } from 'yoke'
import { block, gates, resultText, schedulerWorld, settle, tool, toolLog } from './scheduler-helpers.js'

const safe = { isConcurrencySafe: () => true }

describe('parallel siblings', () => {
  test('three safe calls start their bodies in model order before any completes', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register(tool('s', { ...safe, execute: gate.body }))
    const running = world.run([block('c1', 's'), block('c2', 's'), block('c3', 's')])
    await settle()
    expect(gate.trace).toEqual(['c1-start', 'c2-start', 'c3-start'])
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/call c2', 'tool/call c3'])
    for (const id of ['c1', 'c2', 'c3']) gate.release(id)
    expect(await running).toEqual({ outcome: 'owed' })
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/call c2',
      'tool/call c3',
      'tool/result c1',
      'tool/result c2',
      'tool/result c3',
    ])
    expect(resultText(world.session, 'c2')).toBe('c2 done')
  })
})

describe('exclusive barrier', () => {
  test('r, w, r: the exclusive call waits for r1 to settle and commit, and r3 waits for w', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    const trace = gate.trace
    world.tools.register([
      tool('r', { ...safe, execute: gate.body }),
      tool('w', {
        execute: (_args, context) => {
          trace.push(`w-${context.callId}`)
          return 'written'
        },
      }),
    ])
    const running = world.run([block('r1', 'r'), block('w2', 'w'), block('r3', 'r')])
    await settle()
    expect(trace).toEqual(['r1-start'])
    expect(toolLog(world.session)).toEqual(['tool/call r1'])
    gate.release('r1')
    await settle()
    expect(trace).toEqual(['r1-start', 'r1-end', 'w-w2', 'r3-start'])
    gate.release('r3')
    await running
    expect(trace).toEqual(['r1-start', 'r1-end', 'w-w2', 'r3-start', 'r3-end'])
    expect(toolLog(world.session)).toEqual([
      'tool/call r1',
      'tool/result r1',
      'tool/call w2',
      'tool/result w2',
      'tool/call r3',
      'tool/result r3',
    ])
  })

  test('a call without a classifier, an unknown tool and a classifier returning a truthy non-true value are barriers', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register([
      tool('s', { ...safe, execute: gate.body }),
      tool('one', { isConcurrencySafe: (() => 1) as never, execute: gate.body }),
    ])
    const running = world.run([block('c1', 's'), block('c2', 'nope'), block('c3', 'one'), block('c4', 's')])
    await settle()
    expect(toolLog(world.session)).toEqual(['tool/call c1'])
    gate.release('c1')
    await settle()
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2 UNKNOWN_TOOL',
      'tool/call c3',
    ])
    gate.release('c3')
    await settle()
    expect(gate.trace).toEqual(['c1-start', 'c1-end', 'c3-start', 'c3-end', 'c4-start'])
    gate.release('c4')
    await running
  })
})

describe('model-order commit', () => {
  test('a later call settling first waits for its predecessor; live results follow completion order', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register(tool('s', { ...safe, execute: gate.body }))
    const running = world.run([block('c1', 's'), block('c2', 's')])
    await settle()
    gate.release('c2')
    await settle()
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/call c2'])
    expect(world.live.results.map((payload) => payload.call.callId)).toEqual(['c2'])
    gate.release('c1')
    await running
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/call c2', 'tool/result c1', 'tool/result c2'])
    const derived = world.session
      .deriveMessages()
      .filter((message): message is ToolResultMessage => message.source.kind === 'tool')
    expect(derived.map((message) => message.source.callId)).toEqual(['c1', 'c2'])
    expect(world.live.results.map((payload) => payload.call.callId)).toEqual(['c2', 'c1'])
    expect(world.live.results[0]?.result.content).toEqual([{ type: 'text', text: 'c2 done' }])
  })
})

describe('rolling cap', () => {
  test('cap 2, released in order: c3 starts only after c1 settled and committed', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register(tool('s', { ...safe, execute: gate.body }))
    const running = world.run([block('c1', 's'), block('c2', 's'), block('c3', 's'), block('c4', 's')], {
      options: { maxParallelToolCalls: 2 },
    })
    await settle()
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/call c2'])
    for (const id of ['c1', 'c2', 'c3', 'c4']) {
      gate.release(id)
      await settle()
    }
    await running
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/call c2',
      'tool/result c1',
      'tool/call c3',
      'tool/result c2',
      'tool/call c4',
      'tool/result c3',
      'tool/result c4',
    ])
  })

  test('cap 2, c2 released first: c3 starts at once (c2 is no longer in flight), before any tool/result', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register(tool('s', { ...safe, execute: gate.body }))
    const running = world.run([block('c1', 's'), block('c2', 's'), block('c3', 's'), block('c4', 's')], {
      options: { maxParallelToolCalls: 2 },
    })
    await settle()
    gate.release('c2')
    await settle()
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/call c2', 'tool/call c3'])
    for (const id of ['c1', 'c3', 'c4']) gate.release(id)
    await running
    expect(toolLog(world.session).filter((entry) => entry.startsWith('tool/result'))).toEqual([
      'tool/result c1',
      'tool/result c2',
      'tool/result c3',
      'tool/result c4',
    ])
  })

  test('cap 1 is fully serial', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    world.tools.register(tool('s', { ...safe, execute: gate.body }))
    const running = world.run([block('c1', 's'), block('c2', 's'), block('c3', 's')], {
      options: { maxParallelToolCalls: 1 },
    })
    for (const id of ['c1', 'c2', 'c3']) {
      await settle()
      gate.release(id)
    }
    await running
    expect(gate.trace).toEqual(['c1-start', 'c1-end', 'c2-start', 'c2-end', 'c3-start', 'c3-end'])
    expect(toolLog(world.session)).toEqual([
      'tool/call c1',
      'tool/result c1',
      'tool/call c2',
      'tool/result c2',
      'tool/call c3',
      'tool/result c3',
    ])
  })
})

describe('classification', () => {
  test('is re-done right before each start with the registry of that moment', async () => {
    const world = await schedulerWorld()
    const gate = gates()
    let concurrent = true
    const seen: string[] = []
    world.tools.register(
      tool('s', {
        isConcurrencySafe: (args) => {
          seen.push(JSON.stringify(args))
          return concurrent
        },
        execute: gate.body,
      }),
    )
    const running = world.run([block('c1', 's', '{"n":1}'), block('c2', 's', '{"n":2}'), block('c3', 's', '{"n":3}')], {
      options: { maxParallelToolCalls: 1 },
    })
    await settle()
    expect(toolLog(world.session)).toEqual(['tool/call c1'])
    concurrent = false
    gate.release('c1')
    await settle()
    // c2 is now exclusive: it starts only after c1 committed.
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/result c1', 'tool/call c2'])
    gate.release('c2')
    await settle()
    gate.release('c3')
    await running
    expect(seen[0]).toBe('{"n":1}')
    expect(seen).toContain('{"n":2}')
    expect(seen.at(-1)).toBe('{"n":3}')
  })

  test('a tool registered between two starts is found by the later call', async () => {
    const world = await schedulerWorld()
    world.tools.register(
      tool('first', {
        execute: () => {
          world.tools.register(tool('late'))
          return 'registered'
        },
      }),
    )
    await world.run([block('c1', 'first'), block('c2', 'late')])
    expect(toolLog(world.session)).toEqual(['tool/call c1', 'tool/result c1', 'tool/call c2', 'tool/result c2'])
    expect(resultText(world.session, 'c2')).toBe('late')
  })
})
