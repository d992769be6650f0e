import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineTool, InvalidArgumentError } from 'yoke'
import { formatSchemaIssues, parseToolArguments } from '../../src/tools/index.js'
import { rejectionOf, thrownBy } from '../helpers/outcomes.js'
import { expectError } from '../session/session-helpers.js'

const execute = (): undefined => undefined
const read = defineTool({ name: 'read', description: 'Read a file', input: z.object({ path: z.string() }), execute })
const raw = defineTool({
  name: 'raw',
  description: 'Raw schema',
  input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute,
})

describe('parsing the raw argument text', () => {
  test.each(['not json', '[1]', 'null', '5', '"text"', 'true', '{"path":', ' ', '{} {}'])(
    '%j is not a valid JSON object',
    async (text) => {
      expect(await parseToolArguments(text, read)).toEqual({
        ok: false,
        message: 'arguments for "read" are not a valid JSON object',
      })
      expect(await parseToolArguments(text, raw)).toEqual({
        ok: false,
        message: 'arguments for "raw" are not a valid JSON object',
      })
    },
  )

  test("'' parses as {}", async () => {
    expect(await parseToolArguments('', raw)).toEqual({ ok: true, args: {} })
    const optional = defineTool({
      name: 'opt',
      description: 'Optional',
      input: z.object({ path: z.string().optional() }),
      execute,
    })
    expect(await parseToolArguments('', optional)).toEqual({ ok: true, args: {} })
  })

  test('surrounding whitespace around an object is fine (JSON.parse rules)', async () => {
    expect(await parseToolArguments(' {"path":"a"}\n', read)).toEqual({ ok: true, args: { path: 'a' } })
  })
})

describe('validating zod arguments', () => {
  test('a missing required field gives "do not match its input schema: path: …"', async () => {
    const parsed = await parseToolArguments('{}', read)
    expect(parsed.ok).toBe(false)
    const message = (parsed as { message: string }).message
    expect(message).toContain('do not match its input schema: path:')
    expect(message).toBe(
      'arguments for "read" do not match its input schema: path: Invalid input: expected string, received undefined',
    )
  })

  test('valid arguments give the parsed value', async () => {
    expect(await parseToolArguments('{"path":"a.txt"}', read)).toEqual({ ok: true, args: { path: 'a.txt' } })
  })

  test("'' fails a schema with a required field", async () => {
    const parsed = await parseToolArguments('', read)
    expect(parsed).toEqual({
      ok: false,
      message:
        'arguments for "read" do not match its input schema: path: Invalid input: expected string, received undefined',
    })
  })

  test('nested paths are dot-joined, array indices included', async () => {
    const tool = defineTool({
      name: 'nested',
      description: 'Nested',
      input: z.object({ a: z.object({ items: z.array(z.object({ name: z.string() })) }) }),
      execute,
    })
    const parsed = await parseToolArguments('{"a":{"items":[{"name":"x"},{"name":3}]}}', tool)
    expect(parsed).toEqual({
      ok: false,
      message:
        'arguments for "nested" do not match its input schema: a.items[1].name: Invalid input: expected string, received number',
    })
  })

  test('a root issue is reported as (root)', async () => {
    const tool = defineTool({
      name: 'pair',
      description: 'Pair',
      input: z
        .object({ a: z.number(), b: z.number() })
        .refine((value) => value.a < value.b, { message: 'a must be less than b' }),
      execute,
    })
    expect(await parseToolArguments('{"a":2,"b":1}', tool)).toEqual({
      ok: false,
      message: 'arguments for "pair" do not match its input schema: (root): a must be less than b',
    })
  })

  test('several issues are joined by "; " in zod order', async () => {
    const tool = defineTool({
      name: 'two',
      description: 'Two',
      input: z.object({ path: z.string(), count: z.number() }),
      execute,
    })
    expect(await parseToolArguments('{"count":"x"}', tool)).toEqual({
      ok: false,
      message:
        'arguments for "two" do not match its input schema: path: Invalid input: expected string, received undefined; count: Invalid input: expected number, received string',
    })
  })

  test('custom zod messages are used as they are', async () => {
    const tool = defineTool({
      name: 'msg',
      description: 'Msg',
      input: z.object({ path: z.string().min(3, 'path is too short') }),
      execute,
    })
    expect(await parseToolArguments('{"path":"a"}', tool)).toEqual({
      ok: false,
      message: 'arguments for "msg" do not match its input schema: path: path is too short',
    })
  })

  test('defaults and transforms are applied to args', async () => {
    const tool = defineTool({
      name: 'shape',
      description: 'Shape',
      input: z.object({ path: z.string().transform((path) => path.toUpperCase()), depth: z.number().default(3) }),
      execute,
    })
    expect(await parseToolArguments('{"path":"a.txt"}', tool)).toEqual({ ok: true, args: { path: 'A.TXT', depth: 3 } })
  })

  test('unknown keys follow the schema: stripped by z.object, refused by z.strictObject', async () => {
    expect(await parseToolArguments('{"path":"a","extra":1}', read)).toEqual({ ok: true, args: { path: 'a' } })
    const strict = defineTool({
      name: 'strict',
      description: 'Strict',
      input: z.strictObject({ path: z.string() }),
      execute,
    })
    expect(await parseToolArguments('{"path":"a","extra":1}', strict)).toEqual({
      ok: false,
      message: 'arguments for "strict" do not match its input schema: (root): Unrecognized key: "extra"',
    })
  })

  test('async refinements are awaited', async () => {
    const tool = defineTool({
      name: 'async',
      description: 'Async',
      input: z
        .object({ path: z.string() })
        .refine(async (value) => value.path !== 'forbidden', { message: 'forbidden path', path: ['path'] }),
      execute,
    })
    expect(await parseToolArguments('{"path":"ok"}', tool)).toEqual({ ok: true, args: { path: 'ok' } })
    expect(await parseToolArguments('{"path":"forbidden"}', tool)).toEqual({
      ok: false,
      message: 'arguments for "async" do not match its input schema: path: forbidden path',
    })
  })

  test('a refinement that throws is a (root) mismatch with the thrown message, never a rejection', async () => {
    const tool = defineTool({
      name: 'boom',
      description: 'Boom',
      input: z.object({ path: z.string() }).refine(() => {
        throw new Error('refinement exploded')
      }),
      execute,
    })
    expect(await parseToolArguments('{"path":"a"}', tool)).toEqual({
      ok: false,
      message: 'arguments for "boom" do not match its input schema: (root): refinement exploded',
    })
  })
})

describe('raw JSON Schema tools', () => {
  test('get the parsed object unvalidated', async () => {
    expect(await parseToolArguments('{}', raw)).toEqual({ ok: true, args: {} })
    expect(await parseToolArguments('{"path":5,"other":[1,{"x":null}]}', raw)).toEqual({
      ok: true,
      args: { path: 5, other: [1, { x: null }] },
    })
  })

  test('a __proto__ key stays an own data property', async () => {
    const parsed = await parseToolArguments('{"__proto__":{"polluted":true}}', raw)
    expect(parsed.ok).toBe(true)
    const args = (parsed as { args: Record<string, unknown> }).args
    expect(Object.hasOwn(args, '__proto__')).toBe(true)
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
  })
})

describe('formatSchemaIssues', () => {
  test('formats paths with symbols and numbers, and an empty list as empty text', () => {
    expect(
      formatSchemaIssues([
        { path: ['a', 0, Symbol('s')], message: 'bad' },
        { path: [], message: 'root' },
      ]),
    ).toBe('a[0][Symbol(s)]: bad; (root): root')
    expect(formatSchemaIssues([])).toBe('')
  })
})

describe('formatSchemaIssues refuses what is not a list of { path, message }', () => {
  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'path: bad'],
    ['an array-like object', { length: 0 }],
  ])('issues that are %s: argument issues with the value', (_name, issues) => {
    const error = expectError(
      thrownBy(() => formatSchemaIssues(issues as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'issues' },
    )
    expect(error.value).toBe(issues)
  })

  test.each([
    ['null', null],
    ['a string', 'path: bad'],
    ['a dotted string path', { path: 'a.b', message: 'bad' }],
    ['no path', { message: 'bad' }],
    ['a numeric message', { path: ['a'], message: 5 }],
    ['no message', { path: ['a'] }],
  ])('an entry that is %s: argument issues[<index>] with the entry', (_name, entry) => {
    const issues = [{ path: ['ok'], message: 'fine' }, entry]
    const error = expectError(
      thrownBy(() => formatSchemaIssues(issues as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'issues[1]',
      },
    )
    expect(error.value).toBe(entry)
  })
})

describe('parseToolArguments rejects bad arguments (never a synchronous throw)', () => {
  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 5],
    ['already parsed arguments', { path: 'a' }],
  ])('raw that is %s: InvalidArgumentError argument raw with the value', async (_name, text) => {
    let promise: Promise<unknown> | undefined
    expect(() => {
      promise = parseToolArguments(text as never, read)
    }).not.toThrow()
    const error = expectError(
      await rejectionOf(promise as Promise<unknown>),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'raw',
      },
    )
    expect(error.value).toBe(text)
  })

  test.each([
    ['undefined', undefined],
    ['null', null],
    ['a tool name', 'read'],
    ['an object without a name', { description: 'x', input: { type: 'object' } }],
    ['an object with a numeric name', { name: 5, input: { type: 'object' } }],
  ])('a definition that is %s: InvalidArgumentError argument definition with the value', async (_name, definition) => {
    const error = expectError(
      await rejectionOf(parseToolArguments('{}', definition as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      {
        argument: 'definition',
      },
    )
    expect(error.value).toBe(definition)
  })

  test('raw is checked before the definition; bad argument text still resolves { ok: false }', async () => {
    expectError(
      await rejectionOf(parseToolArguments(5 as never, null as never)),
      InvalidArgumentError,
      'INVALID_ARGUMENT',
      { argument: 'raw' },
    )
    expect(await parseToolArguments('not json', read)).toEqual({
      ok: false,
      message: 'arguments for "read" are not a valid JSON object',
    })
    expect(await parseToolArguments('{"path":"a"}', read)).toEqual({ ok: true, args: { path: 'a' } })
  })
})
