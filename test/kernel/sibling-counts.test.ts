/**
 * A context numbers repeated sibling labels (`x`, `x#2`, …) only while a sibling with that label
 * lives: a parent that spawns one child per session id keeps no entry for the ids of children
 * already disposed.
 */
import { describe, expect, test } from 'vitest'
import { siblingLabelsOf } from '../../src/kernel/context.js'
import { testRoot } from '../helpers/root.js'

describe('sibling counts', () => {
  test('1,000 children with distinct labels, each disposed, leave no label behind', async () => {
    const { root } = testRoot()
    for (let index = 0; index < 1_000; index++) {
      const child = root.child(`agent:session-${index}`)
      expect(child.path).toBe(`harness/agent:session-${index}`)
      await child.dispose()
    }
    expect(siblingLabelsOf(root)).toEqual([])
  })

  test('a parent disposing its children forgets their labels too', async () => {
    const { root } = testRoot()
    const parent = root.child('parent')
    parent.child('a')
    parent.child('a')
    parent.child('b')
    expect(siblingLabelsOf(parent)).toEqual(['a', 'b'])
    await parent.dispose()
    expect(siblingLabelsOf(parent)).toEqual([])
    expect(siblingLabelsOf(root)).toEqual([])
  })

  test('numbering goes on while a sibling with the label lives, and starts over once none does', async () => {
    const { root } = testRoot()
    const first = root.child('x')
    const second = root.child('x')
    await first.dispose()
    // `x#2` still lives: a new `x` must not take a number a live or earlier sibling had.
    const third = root.child('x')
    expect([second.path, third.path]).toEqual(['harness/x#2', 'harness/x#3'])
    expect(siblingLabelsOf(root)).toEqual(['x'])
    await second.dispose()
    await third.dispose()
    expect(siblingLabelsOf(root)).toEqual([])
    expect(root.child('x').path).toBe('harness/x')
  })

  test('a label that looks numbered still never takes a live sibling path after a label was forgotten', async () => {
    const { root } = testRoot()
    const first = root.child('y')
    const numbered = root.child('y#2')
    await first.dispose()
    expect(siblingLabelsOf(root)).toEqual(['y#2'])
    const again = root.child('y')
    const next = root.child('y')
    expect([numbered.path, again.path, next.path]).toEqual(['harness/y#2', 'harness/y', 'harness/y#3'])
  })
})
