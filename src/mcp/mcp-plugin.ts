// Public types come from the main entry, so the subpath's declarations share them with `yoke`.
import type { Disposer, PluginDefinition, ScopeKey } from 'yoke'
import { definePlugin } from '../kernel/plugin.js'
import { ToolsKey } from '../tools/tools-key.js'
import { connectMcpServers, type McpMountedTool } from './connect-mcp-servers.js'
import type { McpServer } from './mcp-server.js'

/** The options of {@link mcpPlugin}. */
export interface McpPluginOptions {
  /** The servers whose tools to mount, from {@link mcpServer}. */
  readonly servers: readonly McpServer[]
  /**
   * The plugin's name (its entry id); give each `mcpPlugin` of one harness its own.
   *
   * @default 'mcp'
   */
  readonly name?: string
  /**
   * The registry layer the tools go into.
   *
   * @default the global layer (every agent sees them)
   */
  readonly scope?: ScopeKey
  /** Told what was mounted from where, renames included, once the tools are registered. */
  readonly onMounted?: (mounted: readonly McpMountedTool[]) => void
}

/**
 * A plugin that connects MCP servers when the harness starts, registers their tools, and closes
 * the servers when the harness closes (stdio children end). A server that fails to start fails
 * the harness start with its `McpServerError`, after closing the others.
 *
 * @example
 * ```ts
 * const harness = await createHarness({
 *   model,
 *   plugins: [mcpPlugin({ servers: [mcpServer({ name: 'everything', command: 'mcp-server-everything' })] })],
 * })
 * ```
 *
 * @param options - the servers, the plugin's name, the scope and a report callback
 * @returns a fresh plugin definition
 */
export function mcpPlugin(options: McpPluginOptions): PluginDefinition<undefined> {
  return definePlugin({
    name: options.name ?? 'mcp',
    inject: [ToolsKey],
    async apply(ctx) {
      const toolset = await connectMcpServers(options.servers)
      let unregister: Disposer
      try {
        unregister = ctx
          .get(ToolsKey)
          .register(toolset.tools, options.scope === undefined ? {} : { scope: options.scope })
        options.onMounted?.(toolset.mounted)
      } catch (error) {
        await toolset.close()
        throw error
      }
      return async () => {
        await unregister()
        await toolset.close()
      }
    },
  })
}
