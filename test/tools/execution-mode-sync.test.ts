import { describe, expect, expectTypeOf, test } from 'vitest'
import { z } from 'zod'
import { defineTool, InvalidArgumentError } from 'yoke'
import { thrownBy } from '../helpers/outcomes.js'
import { tool, toolsHarness } from './registry-helpers.js'

const read = defineTool({
  name: 'read',
  description: 'Read a file',
  input: z.object({ path: z.string() }),
  isConcurrencySafe: ({ path }) => path.endsWith('.txt'),
  execute: ({ path }) => path,
})

describe('harness.tools.executionMode is synchronous', () => {
  test('it returns the mode itself, not a promise', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register([read, tool('plain')])
    const mode = harness.tools.executionMode({ name: 'read', arguments: '{"path":"a.txt"}' })
    expectTypeOf(mode).toEqualTypeOf<'parallel' | 'exclusive'>()
    expect(mode).toBe('parallel')
    expect(harness.tools.executionMode({ name: 'read', arguments: '{"path":"a.bin"}' })).toBe('exclusive')
    expect(harness.tools.executionMode({ name: 'read', arguments: '{"path":1}' })).toBe('exclusive')
    expect(harness.tools.executionMode({ name: 'read', arguments: 'not json' })).toBe('exclusive')
    expect(harness.tools.executionMode({ name: 'plain', arguments: '{}' })).toBe('exclusive')
    expect(harness.tools.executionMode({ name: 'nope', arguments: '{}' })).toBe('exclusive')
  })

  test('a schema with an asynchronous refinement fails closed: exclusive, and the classifier is not called', async () => {
    const { harness } = await toolsHarness()
    let classified = 0
    harness.tools.register(
      defineTool({
        name: 'lookup',
        description: 'Look a key up',
        input: z.object({ key: z.string() }).refine(async () => true),
        isConcurrencySafe: () => {
          classified++
          return true
        },
        execute: ({ key }) => key,
      }),
    )
    expect(harness.tools.executionMode({ name: 'lookup', arguments: '{"key":"k"}' })).toBe('exclusive')
    expect(classified).toBe(0)
  })

  test('a scope that is not an object throws InvalidArgumentError at once', async () => {
    const { harness } = await toolsHarness()
    harness.tools.register(read)
    const error = thrownBy(() => harness.tools.executionMode({ name: 'read', arguments: '{}' }, 7 as never))
    expect(InvalidArgumentError.is(error)).toBe(true)
  })
})
