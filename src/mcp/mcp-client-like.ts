/**
 * The few parts of an MCP client that `yoke/mcp` uses, written as structural types so that Yoke's
 * declarations never import the optional peer: a `Client` of `@modelcontextprotocol/sdk` 1.x fits
 * them as it is, and so does any other client with these methods.
 *
 * @module
 */

/** The hints a server gives about a tool. Hints only: a server may be wrong about them. */
export interface McpToolAnnotations {
  /** A human-readable title. */
  readonly title?: string | undefined
  /** The tool does not change its environment. */
  readonly readOnlyHint?: boolean | undefined
  /** The tool may destroy or overwrite things (meaningful when not read-only; absent means yes). */
  readonly destructiveHint?: boolean | undefined
  /** Calling it again with the same arguments has no further effect. */
  readonly idempotentHint?: boolean | undefined
  /** The tool reaches beyond the server (the web, other systems). */
  readonly openWorldHint?: boolean | undefined
}

/** A tool's input schema: a JSON Schema whose root type is `'object'`. */
export interface McpInputSchema {
  /** Always `'object'`. */
  readonly type: 'object'
  readonly [key: string]: unknown
}

/** One tool as a server lists it. */
export interface McpToolInfo {
  /** The server's name for the tool. */
  readonly name: string
  /** A human-readable title. */
  readonly title?: string | undefined
  /** What the tool does. */
  readonly description?: string | undefined
  /** The JSON Schema of the arguments; its root type is `'object'`. */
  readonly inputSchema: McpInputSchema
  /** The hints about the tool's effects. */
  readonly annotations?: McpToolAnnotations | undefined
}

/** A page of a server's tool list. */
export interface McpToolList {
  /** The tools of this page. */
  readonly tools: readonly McpToolInfo[]
  /** The cursor of the next page, when there is one. */
  readonly nextCursor?: string | undefined
}

/** One block of a tool result's content, as a server sends it (text, image, audio, resource, …). */
export interface McpContentBlock {
  /** The block's kind: `'text'`, `'image'`, `'audio'`, `'resource'`, `'resource_link'`, … */
  readonly type: string
  readonly [key: string]: unknown
}

/** What a server answers to a tool call. */
export interface McpCallToolResult {
  /** The result's content blocks. */
  readonly content?: readonly McpContentBlock[] | undefined
  /** The result as JSON, for tools that declare an output schema (an object in 1.x, any JSON value in 2.x). */
  readonly structuredContent?: unknown
  /** The tool failed; the content says why. */
  readonly isError?: boolean | undefined
  readonly [key: string]: unknown
}

/** The answer shape of old protocol versions: one bare value. */
export interface McpLegacyToolResult {
  /** The tool's value, shown to the model as JSON. */
  readonly toolResult: unknown
}

/** A progress notification of a running request, as the server sent it. */
export interface McpProgress {
  /** The progress so far (grows with every notification). */
  readonly progress: number
  /** The total, when the server knows it. */
  readonly total?: number | undefined
  /** A human-readable message. */
  readonly message?: string | undefined
}

/** Per-request options of an MCP client. */
export interface McpRequestOptions {
  /** Cancels the request (the client tells the server with `notifications/cancelled`). */
  readonly signal?: AbortSignal
  /** The request's timeout in milliseconds. */
  readonly timeout?: number
  /** Asks the server for progress notifications (a progress token is sent) and receives them. */
  readonly onprogress?: (progress: McpProgress) => void
}

/**
 * An MCP client that is already connected: what `mcpServer({ client })` takes. The
 * `@modelcontextprotocol/sdk` 1.x `Client` fits after `await client.connect(transport)`, and so
 * does the `@modelcontextprotocol/client` 2.x `Client`, whose `callTool` takes the options second
 * (see `clientApi` of `mcpServer`).
 */
export interface McpClientLike {
  /**
   * Lists one page of the server's tools.
   *
   * @param params - the cursor of the page, when not the first
   * @param options - the request's signal and timeout
   */
  listTools(params?: { cursor?: string }, options?: McpRequestOptions): Promise<McpToolList>
  /**
   * Calls a tool.
   *
   * @param params - the tool's name on the server and its arguments
   * @param resultSchema - left `undefined` (the client's default result schema); a 2.x client
   *   gets the request options here instead
   * @param options - the request's signal, timeout and progress callback
   */
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: McpRequestOptions,
  ): Promise<McpCallToolResult | McpLegacyToolResult>
  /** Closes the connection (and, for stdio, ends the server process). */
  close(): Promise<void>
}
