import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineTool, ErrorCode, type ToolDefinition, ToolDefinitionError } from 'yoke'

const execute = (): string => 'ok'

/** Calls `defineTool` with a value the type system would refuse, and returns the error it throws. */
function definitionError(spec: unknown): ToolDefinitionError {
  let thrown: unknown
  try {
    defineTool(spec as never)
  } catch (error) {
    thrown = error
  }
  expect(ToolDefinitionError.is(thrown), 'throws a ToolDefinitionError').toBe(true)
  const error = thrown as ToolDefinitionError
  expect(error.code).toBe(ErrorCode.INVALID_TOOL_DEFINITION)
  return error
}

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen)
}

const base = { name: 'read', description: 'Read a file', input: z.object({ path: z.string() }), execute }

describe('defineTool with a zod input', () => {
  test('parameters is the draft-07 input JSON Schema without $schema, and nothing else is added', () => {
    const input = z.object({ path: z.string() })
    const definition = defineTool({ name: 'read', description: 'Read a file', input, execute })
    const { $schema, ...expected } = z.toJSONSchema(input, { target: 'draft-07', io: 'input' })
    expect($schema).toBe('http://json-schema.org/draft-07/schema#')
    expect(definition.parameters).toEqual(expected)
    expect(definition.parameters).toEqual({
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
    })
    expect(Object.hasOwn(definition.parameters, '$schema')).toBe(false)
    expect(Object.keys(definition).sort()).toEqual([
      'description',
      'execute',
      'input',
      'inputKind',
      'name',
      'parameters',
    ])
    expect(definition.inputKind).toBe('zod')
    expect(definition.input).toBe(input)
    expect(definition.execute).toBe(execute)
  })

  test('the definition is frozen and its parameters deep-frozen', () => {
    const definition = defineTool(base)
    expect(Object.isFrozen(definition)).toBe(true)
    expect(isDeepFrozen(definition.parameters)).toBe(true)
    expect(() => {
      ;(definition as { name: string }).name = 'write'
    }).toThrow(TypeError)
  })

  test('the JSON Schema describes the input side: defaults are optional, transforms show their input type', () => {
    const input = z.object({
      path: z.string(),
      depth: z.number().default(1),
      size: z.string().transform((text) => text.length),
    })
    const definition = defineTool({ name: 'scan', description: 'Scan', input, execute })
    expect(definition.parameters).toEqual({
      type: 'object',
      properties: { path: { type: 'string' }, depth: { type: 'number', default: 1 }, size: { type: 'string' } },
      required: ['path', 'size'],
    })
  })

  test('optional fields are kept as given, absent ones are not added, and none reaches the JSON Schema', () => {
    const isConcurrencySafe = (): boolean => true
    const needsApproval = (): boolean => false
    const definition = defineTool({ ...base, isConcurrencySafe, needsApproval, timeoutMs: 0.5 })
    expect(definition.isConcurrencySafe).toBe(isConcurrencySafe)
    expect(definition.needsApproval).toBe(needsApproval)
    expect(definition.timeoutMs).toBe(0.5)
    expect(Object.keys(definition.parameters).sort()).toEqual(['properties', 'required', 'type'])
    const withUndefined = defineTool({ ...base, timeoutMs: undefined as unknown as number })
    expect(Object.hasOwn(withUndefined, 'timeoutMs')).toBe(false)
  })
})

describe('defineTool with a raw JSON Schema input', () => {
  test('parameters is a deep-frozen copy, input the same copy, and later changes to the source do not leak', () => {
    const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }
    const definition = defineTool({ name: 'raw', description: 'Raw', input: schema, execute })
    expect(definition.inputKind).toBe('json-schema')
    expect(definition.parameters).toEqual(schema)
    expect(definition.parameters).not.toBe(schema)
    expect(definition.input).toBe(definition.parameters)
    expect(isDeepFrozen(definition.parameters)).toBe(true)
    schema.properties.path.type = 'number'
    expect(definition.parameters).toEqual({
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
    })
  })

  test('a raw schema is sent as it is, its top-level $schema included', () => {
    const schema = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }
    const definition = defineTool({ name: 'raw', description: 'Raw', input: schema, execute })
    expect(definition.parameters).toEqual(schema)
    expect(definition.input).toEqual(schema)
    expect(isDeepFrozen(definition.parameters)).toBe(true)
  })

  test('a null-prototype schema object is accepted', () => {
    const schema = Object.assign(Object.create(null) as Record<string, unknown>, { type: 'object' })
    expect(
      defineTool({ name: 'raw', description: 'Raw', input: schema as { type: 'object' }, execute }).parameters,
    ).toEqual({ type: 'object' })
  })
})

describe('definition errors, field by field', () => {
  test.each(['read file', '', 'a'.repeat(65), 'read.file', 'läsa'])(
    'name %j throws with field name and the name as value',
    (name) => {
      const error = definitionError({ ...base, name })
      expect(error.field).toBe('name')
      expect(error.value).toBe(name)
      expect(error.toolName).toBeUndefined()
      expect(error.message).toContain('name must be 1-64 characters of [A-Za-z0-9_-]')
      expect(error.message).toContain(JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name))
    },
  )

  test.each([42, undefined, null])('a non-string name %j throws with field name', (name) => {
    const error = definitionError({ ...base, name })
    expect(error.field).toBe('name')
    expect(error.value).toBe(name)
  })

  test('names of 1 and 64 characters of the allowed set are accepted', () => {
    expect(defineTool({ ...base, name: 'a'.repeat(64) }).name).toBe('a'.repeat(64))
    expect(defineTool({ ...base, name: 'A-b_9' }).name).toBe('A-b_9')
    expect(defineTool({ ...base, name: 'x' }).name).toBe('x')
  })

  test.each(['', undefined, 7])('description %j throws with field description', (description) => {
    const error = definitionError({ ...base, description })
    expect(error).toMatchObject({ field: 'description', value: description, toolName: 'read' })
    expect(error.message).toContain('tool "read": description must be a non-empty string')
  })

  test('a zod input whose root is not an object throws with field input', () => {
    const input = z.string()
    const error = definitionError({ ...base, input })
    expect(error).toMatchObject({ field: 'input', value: input, toolName: 'read' })
    expect(error.message).toBe(
      'tool "read": input must describe an object (root type "object"), got root type "string"',
    )
    expect(error.cause).toBeUndefined()
  })

  test('a zod input that cannot be converted throws with field input and the conversion error as cause', () => {
    const input = z.object({ n: z.bigint() })
    const error = definitionError({ ...base, input })
    expect(error).toMatchObject({ field: 'input', value: input })
    expect(error.cause).toBeInstanceOf(Error)
    expect((error.cause as Error).message).toBe('BigInt cannot be represented in JSON Schema')
    expect(error.message).toBe(
      'tool "read": input cannot be converted to JSON Schema: BigInt cannot be represented in JSON Schema',
    )
  })

  test('a zod union of objects has no root type and is refused', () => {
    const error = definitionError({
      ...base,
      input: z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]),
    })
    expect(error.field).toBe('input')
    expect(error.message).toContain('got no root type')
  })

  test.each([
    ['a missing input', undefined],
    ['null', null],
    ['an array', [{ type: 'object' }]],
    ['a number', 5],
    ['a string', 'object'],
  ])('%s as input throws with field input', (_label, input) => {
    const error = definitionError({ ...base, input })
    expect(error).toMatchObject({ field: 'input', value: input })
    expect(error.message).toContain('must be a zod v4 schema or a JSON Schema object')
  })

  test.each([
    ['root type array', { type: 'array' }, 'got root type "array"'],
    ['no root type', { properties: {} }, 'got no root type'],
    ['a type list', { type: ['object', 'null'] }, 'got root type ["object","null"]'],
  ])('a raw JSON Schema with %s throws with field input', (_label, input, detail) => {
    const error = definitionError({ ...base, input })
    expect(error.field).toBe('input')
    expect(error.message).toContain(detail)
  })

  test.each([
    ['a function inside', { type: 'object', properties: { x: { default: () => 1 } } }, 'input.properties.x.default'],
    ['a bigint inside', { type: 'object', maximum: 10n }, 'input.maximum'],
    ['a Date inside', { type: 'object', default: new Date(0) }, 'input.default'],
    ['undefined inside', { type: 'object', title: undefined }, 'input.title'],
    [
      'a class instance root',
      new (class Schema {
        type = 'object'
      })(),
      'input',
    ],
  ])('a raw JSON Schema that is not lossless JSON (%s) throws with field input', (_label, input, path) => {
    const error = definitionError({ ...base, input })
    expect(error.field).toBe('input')
    expect(error.message).toContain('input must be a lossless-JSON plain object')
    expect(error.message).toContain(path)
    expect(error.cause).toBeInstanceOf(Error)
  })

  test('a cyclic raw JSON Schema throws with field input', () => {
    const input: Record<string, unknown> = { type: 'object' }
    input['properties'] = { self: input }
    const error = definitionError({ ...base, input })
    expect(error.field).toBe('input')
    expect(error.message).toContain('cycle')
  })

  test('a zod v3 schema is named as such', () => {
    const legacy = { _def: { typeName: 'ZodObject' }, safeParse: () => ({ success: true }) }
    const error = definitionError({ ...base, input: legacy })
    expect(error.field).toBe('input')
    expect(error.message).toContain('zod v3')
  })

  test.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '50', null])(
    'timeoutMs %s throws with field timeoutMs',
    (timeoutMs) => {
      const error = definitionError({ ...base, timeoutMs })
      expect(error).toMatchObject({ field: 'timeoutMs', toolName: 'read' })
      expect(Object.is(error.value, timeoutMs)).toBe(true)
      expect(error.message).toContain('timeoutMs must be a positive finite number')
    },
  )

  test.each([
    ['execute', undefined],
    ['execute', 'run'],
    ['isConcurrencySafe', true],
    ['needsApproval', false],
    ['needsApproval', null],
  ])('%s = %j throws with that field', (field, value) => {
    const error = definitionError({ ...base, [field]: value })
    expect(error).toMatchObject({ field, value, toolName: 'read' })
    expect(error.message).toContain(`${field} must be a function`)
  })

  test.each(['foo', 'parameters', 'inputKind', 'timeout'])('an extra key %s throws with field = the key', (key) => {
    const error = definitionError({ ...base, [key]: 1 })
    expect(error).toMatchObject({ field: key, value: 1, toolName: 'read' })
    expect(error.message).toBe(`tool "read": ${key} is not a tool definition field`)
  })

  test('an extra symbol key throws with field = the symbol rendered', () => {
    const error = definitionError({ ...base, [Symbol('extra')]: true })
    expect(error.field).toBe('Symbol(extra)')
  })

  test.each([null, 'read', 42])('a spec that is not an object (%j) throws with field spec', (spec) => {
    const error = definitionError(spec)
    expect(error).toMatchObject({ field: 'spec', value: spec, toolName: undefined })
  })

  test('nothing is half-defined: the first violation is reported, in field order', () => {
    const error = definitionError({ name: 'bad name', description: '', input: z.string(), timeoutMs: 0, foo: 1 })
    expect(error.field).toBe('name')
    const second = definitionError({ name: 'ok', description: '', input: z.string(), timeoutMs: 0 })
    expect(second.field).toBe('description')
  })

  test('a returned definition passes the ToolDefinition type', () => {
    const definition: ToolDefinition = defineTool(base)
    expect(definition.name).toBe('read')
  })
})
