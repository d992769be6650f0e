/**
 * `toolChoice` → `tool_choice` and `responseFormat` → `response_format` on the wire of the
 * OpenAI-compatible and DeepSeek adapters, asserted on the JSON body the mock server received
 * over loopback.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { deepseek, InvalidOptionsError, openaiCompatible, responseFormatInstruction } from 'yoke'
import { collect, mockServer, oa, req } from './adapter-helpers.js'

const echo = { name: 'echo', description: 'Echoes', parameters: { type: 'object' } }
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
const format = { type: 'json' as const, schema }

async function sentBody(
  request: Parameters<typeof req>[0],
  overlay: Parameters<typeof oa>[1] = {},
): Promise<Record<string, unknown>> {
  const server = await mockServer([{ text: '{"city":"Paris"}' }])
  const chunks = await collect(oa(server, overlay), req(request))
  expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' })
  return server.requests[0]?.body as Record<string, unknown>
}

describe('tool_choice', () => {
  test.each([
    ['auto', 'auto'],
    ['none', 'none'],
    ['required', 'required'],
    [{ name: 'echo' }, { type: 'function', function: { name: 'echo' } }],
  ] as const)('%j → %j, right after tools', async (toolChoice, wire) => {
    const body = await sentBody({ tools: [echo], toolChoice })
    expect(body['tool_choice']).toEqual(wire)
    const keys = Object.keys(body)
    expect(keys.indexOf('tool_choice')).toBe(keys.indexOf('tools') + 1)
  })

  test('absent toolChoice sends no tool_choice', async () => {
    expect(await sentBody({ tools: [echo] })).not.toHaveProperty('tool_choice')
  })

  test("'none' without tools sends no tool_choice (the API refuses one without tools)", async () => {
    const body = await sentBody({ toolChoice: 'none' })
    expect(body).not.toHaveProperty('tool_choice')
    expect(body).not.toHaveProperty('tools')
  })
})

describe('response_format', () => {
  test("json_schema by default: name 'output', the schema, no strict; system unchanged", async () => {
    const body = await sentBody({ system: 'S', responseFormat: format })
    expect(body['response_format']).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema } })
    expect((body['messages'] as unknown[])[0]).toEqual({ role: 'system', content: 'S' })
  })

  test('a given name is sent, made safe for the API; strictJsonSchema sends strict: true', async () => {
    const body = await sentBody(
      { responseFormat: { ...format, name: 'weather report/v1' } },
      { strictJsonSchema: true },
    )
    expect(body['response_format']).toEqual({
      type: 'json_schema',
      json_schema: { name: 'weather_report_v1', schema, strict: true },
    })
  })

  test("responseFormatStyle 'json_object': JSON mode plus the instruction in the system message", async () => {
    const body = await sentBody({ system: 'S', responseFormat: format }, { responseFormatStyle: 'json_object' })
    expect(body['response_format']).toEqual({ type: 'json_object' })
    expect((body['messages'] as unknown[])[0]).toEqual({
      role: 'system',
      content: `S\n\n${responseFormatInstruction(format)}`,
    })
  })

  test("responseFormatStyle 'instruction': no response_format, the instruction alone as the system message", async () => {
    const body = await sentBody({ responseFormat: format }, { responseFormatStyle: 'instruction' })
    expect(body).not.toHaveProperty('response_format')
    expect((body['messages'] as unknown[])[0]).toEqual({ role: 'system', content: responseFormatInstruction(format) })
  })

  test('without responseFormat nothing is added, whatever the style', async () => {
    const body = await sentBody({ system: 'S' }, { responseFormatStyle: 'json_object' })
    expect(body).not.toHaveProperty('response_format')
    expect((body['messages'] as unknown[])[0]).toEqual({ role: 'system', content: 'S' })
  })

  test('deepseek uses JSON mode plus the instruction (it has no json_schema)', async () => {
    const server = await mockServer([{ text: '{"city":"Paris"}' }])
    const adapter = deepseek({ baseURL: server.baseURL, apiKey: 'k', model: 'deepseek-v4-flash' })
    expect(adapter.supportsResponseFormat).toBe(true)
    await collect(
      adapter,
      req({
        provider: 'deepseek',
        model: 'deepseek-v4-flash',
        tools: [echo],
        toolChoice: 'none',
        responseFormat: format,
      }),
    )
    const body = server.requests[0]?.body as Record<string, unknown>
    expect(body['response_format']).toEqual({ type: 'json_object' })
    expect(body['tool_choice']).toBe('none')
    expect((body['messages'] as unknown[])[0]).toEqual({ role: 'system', content: responseFormatInstruction(format) })
  })

  test.each([
    [{ responseFormatStyle: 'xml' }, 'responseFormatStyle'],
    [{ strictJsonSchema: 'yes' }, 'strictJsonSchema'],
  ])('%j → InvalidOptionsError at %s', (overlay, field) => {
    let caught: unknown
    try {
      openaiCompatible({ baseURL: 'http://127.0.0.1:1/v1', ...(overlay as object) })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(InvalidOptionsError)
    expect((caught as InvalidOptionsError).field).toBe(field)
  })
})
