/**
 * A `baseURL` with a query string (as Azure deployments use): the path is joined before the query
 * and the query is kept; checked on the mock server over loopback.
 *
 * @module
 */
import { describe, expect, test } from 'vitest'
import { collect, mockServer, oa, req } from './adapter-helpers.js'

describe('baseURL with a query string', () => {
  test('an Azure-style ?api-version=… stays after the joined path', async () => {
    const server = await mockServer([{ text: 'ok' }])
    const adapter = oa(server, { baseURL: `${server.baseURL}?api-version=2024-10-21` })
    const chunks = await collect(adapter, req())
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/chat/completions?api-version=2024-10-21'])
    expect(adapter.toJSON().baseURL).toBe(`${server.baseURL}?api-version=2024-10-21`)
  })

  test('a trailing / before the query is trimmed, several parameters are kept in order, a fragment is not sent', async () => {
    const server = await mockServer([{ text: 'ok' }])
    const adapter = oa(server, { baseURL: `${server.baseURL}/?api-version=1&b=x%20y#frag` })
    await collect(adapter, req())
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/chat/completions?api-version=1&b=x%20y'])
  })

  test('without a query the URL is unchanged', async () => {
    const server = await mockServer([{ text: 'ok' }])
    await collect(oa(server, { baseURL: `${server.baseURL}/` }), req())
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/chat/completions'])
  })
})
