import type { JsonObject } from '../../session/json-value.js'

/** The JSON error bodies of the mock OpenAI server, OpenAI's `{ error }` shape. */
export const mockErrorBodies = {
  /** A failed `apiKey` check and the `auth` fault (401). */
  auth: {
    error: { message: 'Incorrect API key provided', type: 'authentication_error', code: 'invalid_api_key' },
  },
  /** The `rate-limit` fault (429). */
  rateLimit: { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } },
  /** The `server-error` fault (500 by default). */
  server: { error: { message: 'The server had an error', type: 'server_error' } },
  /** The `context-overflow` fault (400). */
  contextOverflow: {
    error: {
      message: "This model's maximum context length is 1000 tokens.",
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
    },
  },
  /** The `quota` fault (402). */
  quota: {
    error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' },
  },
  /** A script with no step left for the request (500). */
  exhausted: { error: { message: 'mock script exhausted', code: 'script_exhausted' } },
  /** A request body that is not JSON (400). */
  invalidJson: {
    error: { message: 'request body is not valid JSON', type: 'invalid_request_error', code: 'invalid_json' },
  },
} as const satisfies Record<string, JsonObject>

/**
 * The 404 body for a request outside the two routes.
 *
 * @param method - the request method
 * @param path - the request path
 * @returns the body
 */
export function notFoundBody(method: string, path: string): JsonObject {
  return { error: { message: `no route for ${method} ${path}`, type: 'invalid_request_error', code: 'not_found' } }
}

/**
 * The 500 body when a script function threw or returned an invalid step.
 *
 * @param message - what went wrong
 * @returns the body
 */
export function scriptErrorBody(message: string): JsonObject {
  return { error: { message: `mock script failed: ${message}`, code: 'script_error' } }
}
