import { causeOf } from '../errors/cause-of.js'
import { ErrorCode } from '../errors/codes.js'
import { HarnessError } from '../errors/harness-error.js'

/** `MCP_SERVER_FAILED`: an MCP server could not be connected, listed or mounted as tools. */
export class McpServerError extends HarnessError {
  static override readonly brand: string = 'McpServerError'
  /** The server's name, as given to `mcpServer`. */
  readonly server: string
  /** What went wrong, in a few words (also in the message). */
  readonly reason: string

  /** @param options - the server, the reason and the underlying error */
  constructor(options: { readonly server: string; readonly reason: string; readonly cause?: unknown }) {
    super(ErrorCode.MCP_SERVER_FAILED, `MCP server "${options.server}": ${options.reason}`, causeOf(options))
    this.server = options.server
    this.reason = options.reason
  }
}
