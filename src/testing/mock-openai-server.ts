import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ErrorCode } from '../errors/codes.js'
import { InvalidArgumentError } from '../errors/invalid-argument-error.js'
import type { InvalidOptionsError } from '../errors/invalid-options-error.js'
import type { ValidationIssue } from '../errors/issue.js'
import { type OptionRule, optionIssues, optionRule, throwOptionIssues } from '../kernel/option-issues.js'
import { ScriptedModelError } from '../errors/scripted-model-error.js'
import type { JsonValue } from '../session/json-value.js'
import { mockErrorBodies, notFoundBody, scriptErrorBody } from './mock-openai/mock-error-bodies.js'
import type { MockScript } from './mock-openai/mock-script.js'
import { playStep } from './mock-openai/play-step.js'
import { createScriptCursor, scriptIssues } from './mock-openai/script-cursor.js'

/** Options of {@link startMockOpenAIServer}. */
export interface MockOpenAIServerOptions {
  /** The steps the server answers accepted requests with. */
  readonly script: MockScript
  /** When set, requests must carry `authorization: Bearer <apiKey>`, else 401 (no step consumed). */
  readonly apiKey?: string
  /**
   * The request header whose value selects the step list of a keyed script and is passed to a
   * script function (case-insensitive).
   *
   * @default 'x-session-id'
   */
  readonly sessionIdHeader?: string
}

/** One request the mock server received (every request, routed or not). */
export interface MockRecordedRequest {
  /** The HTTP method, e.g. `'POST'`. */
  readonly method: string
  /** The request target as sent, e.g. `'/v1/chat/completions'` (a query string included). */
  readonly path: string
  /** The headers, names lower-cased as Node gives them; repeated values joined with `', '`. */
  readonly headers: Readonly<Record<string, string>>
  /** The parsed JSON body, or the raw text when it is not JSON (`''` without a body). */
  readonly body: JsonValue
}

/** A running mock OpenAI-compatible server. Dispose it or call `close()`. */
export interface MockOpenAIServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string
  /** Every request received so far, in arrival order (recorded once its body is read). */
  readonly requests: readonly MockRecordedRequest[]
  /**
   * Checks that the script was used exactly.
   *
   * @throws the first error a script function threw (or an `InvalidArgumentError` for the first
   *   invalid step it returned); else {@link ScriptedModelError} `SCRIPT_OVERRUN` (`overrun`) when a
   *   request found the script exhausted; else `SCRIPT_INCOMPLETE` (`remaining`) when list steps
   *   are left
   */
  assertComplete(): void
  /**
   * Whether the client closed the connection of `requests[index]` before the server finished its
   * response (for instance while a `stall` step waits).
   *
   * @param index - an index into {@link MockOpenAIServer.requests}
   * @returns resolves `true` once the client went away first, `false` once the response ended
   *   (or the server itself destroyed the connection)
   * @throws (as a rejection) `InvalidArgumentError` when no request has that index
   */
  clientClosed(index: number): Promise<boolean>
  /**
   * Stops the server: ends every open connection (stalled ones too) and cancels pending delays.
   * Idempotent.
   *
   * @returns resolves once the server is closed
   */
  close(): Promise<void>
}

const routes: ReadonlySet<string> = new Set(['/v1/chat/completions', '/chat/completions'])

const optionRules: Readonly<Record<string, OptionRule>> = Object.freeze({
  script: optionRule.any,
  apiKey: optionRule.string,
  sessionIdHeader: (value) =>
    typeof value === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value) ? undefined : 'must be a header name',
})

function mockOptionIssues(options: MockOpenAIServerOptions | undefined): ValidationIssue[] {
  // `script` is required, so a missing options object is a root issue too.
  const issues = optionIssues(options ?? null, optionRules, '{ script, apiKey?, sessionIdHeader? }')
  if (options === undefined || issues[0]?.path.length === 0) return issues
  return [...issues, ...scriptIssues(options.script)]
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = []
    request.on('data', (part: Buffer) => parts.push(part))
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')))
    request.on('error', reject)
    request.on('close', () => reject(new Error('the request closed before its body ended')))
  })
}

function parseJson(text: string): { readonly value: JsonValue } | undefined {
  try {
    return { value: JSON.parse(text) as JsonValue }
  } catch {
    return undefined
  }
}

function recordHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

function sendJson(response: ServerResponse, status: number, body: JsonValue): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
}

/**
 * Starts a real HTTP server on `127.0.0.1` (random port) that speaks the OpenAI chat-completions
 * streaming protocol from a script, for testing OpenAI-compatible adapters.
 * Routes: `POST /v1/chat/completions` and `POST /chat/completions`; anything else gets 404. A wrong
 * bearer (with `apiKey`) gets 401 and a non-JSON body 400; neither consumes a step. Each accepted
 * request consumes one step and gets `x-request-id: req_<n>` (`n` counting accepted requests from
 * 1); with no step left it gets 500 `script_exhausted`. Never writes to stdout.
 *
 * @param options - the script, the expected API key and the session id header
 * @returns resolves to the listening server
 * @throws (as a rejection) {@link InvalidOptionsError} for an invalid script or option
 * @example
 * ```ts
 * await using server = await startMockOpenAIServer({ script: [{ text: 'hello' }, { fault: 'rate-limit' }] })
 * const adapter = openaiCompatible({ baseURL: server.baseURL, apiKey: 'test-key', model: 'gpt-test' })
 * ```
 */
export async function startMockOpenAIServer(options: MockOpenAIServerOptions): Promise<MockOpenAIServer> {
  // The error's value is the first issue's field, the whole options for a root issue.
  throwOptionIssues(mockOptionIssues(options), options, 'startMockOpenAIServer options')
  const cursor = createScriptCursor(options.script)
  const sessionIdHeader = (options.sessionIdHeader ?? 'x-session-id').toLowerCase()
  const requests: MockRecordedRequest[] = []
  const outcomes: Promise<boolean>[] = []
  const closing = new AbortController()
  let accepted = 0
  let toolCalls = 0

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let serverDestroyed = false
    const raw = await readBody(request)
    const parsed = parseJson(raw)
    const path = request.url ?? '/'
    const headers = recordHeaders(request)
    const method = request.method ?? 'GET'
    requests.push({ method, path, headers, body: parsed === undefined ? raw : parsed.value })
    outcomes.push(
      new Promise((resolve) => {
        response.once('close', () => resolve(!response.writableFinished && !serverDestroyed && !closing.signal.aborted))
      }),
    )
    const pathname = path.split('?')[0] ?? path
    if (method !== 'POST' || !routes.has(pathname)) return sendJson(response, 404, notFoundBody(method, path))
    if (options.apiKey !== undefined && headers['authorization'] !== `Bearer ${options.apiKey}`) {
      return sendJson(response, 401, mockErrorBodies.auth)
    }
    if (parsed === undefined) return sendJson(response, 400, mockErrorBodies.invalidJson)
    const taken = await cursor.take(parsed.value, headers[sessionIdHeader])
    if (taken.kind === 'exhausted') return sendJson(response, 500, mockErrorBodies.exhausted)
    if (taken.kind === 'error') return sendJson(response, 500, scriptErrorBody(taken.message))
    accepted += 1
    await playStep(taken.step, {
      request,
      response,
      requestNumber: accepted,
      body: parsed.value,
      signal: closing.signal,
      nextToolCallNumber: () => ++toolCalls,
      onServerDestroy: () => {
        serverDestroyed = true
      },
    })
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      // The client went away mid-request or the server closed during a delay: nothing to answer.
      response.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  let closed: Promise<void> | undefined

  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      closing.abort()
      server.close(() => resolve())
      server.closeAllConnections()
    })
    return closed
  }

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    assertComplete: () => {
      if (cursor.failure !== undefined) throw cursor.failure.error
      if (cursor.overrun > 0) throw new ScriptedModelError({ code: ErrorCode.SCRIPT_OVERRUN, overrun: cursor.overrun })
      const remaining = cursor.remaining
      if (remaining > 0) throw new ScriptedModelError({ code: ErrorCode.SCRIPT_INCOMPLETE, remaining })
    },
    clientClosed: async (index) => {
      const outcome = outcomes[index]
      if (outcome === undefined) {
        throw new InvalidArgumentError({ argument: 'index', reason: `no request #${index} was recorded`, value: index })
      }
      return outcome
    },
    close,
    [Symbol.asyncDispose]: close,
  }
}
