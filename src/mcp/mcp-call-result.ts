import type { JsonObject, JsonValue } from '../session/json-value.js'
import { isJsonValue } from '../session/snapshot/snapshot-json.js'
import type { ToolContentBlock } from '../tools/tool-definition.js'
import { toolResult } from '../tools/tool-result.js'
import type { ToolResult } from '../tools/tool-result-shape.js'
import type { McpCallToolResult, McpContentBlock } from './mcp-client-like.js'

/** Where a result came from, kept in the result's `meta` (logged, never sent to the model). */
export interface McpCallOrigin {
  /** The server's name. */
  readonly server: string
  /** The tool's name on the server. */
  readonly tool: string
}

function stringField(block: McpContentBlock, key: string): string | undefined {
  const value = block[key]
  return typeof value === 'string' ? value : undefined
}

/** A resource block as text: its text when it has one, else a line naming what was left out. */
function resourceText(block: McpContentBlock): string {
  const resource = block['resource']
  if (typeof resource !== 'object' || resource === null) return '[resource]'
  const fields = resource as Record<string, unknown>
  const uri = typeof fields['uri'] === 'string' ? fields['uri'] : 'unknown'
  if (typeof fields['text'] === 'string') return `[resource ${uri}]\n${fields['text']}`
  const mimeType = typeof fields['mimeType'] === 'string' ? `, ${fields['mimeType']}` : ''
  return `[binary resource ${uri}${mimeType} left out]`
}

/**
 * One server block as Yoke content: text stays text, an image becomes an image block (as a
 * `data:` URI), and what Yoke cannot carry (audio, binary resources) becomes a line saying what
 * was left out, so the model knows the tool returned it.
 */
function toBlock(block: McpContentBlock): ToolContentBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: stringField(block, 'text') ?? '' }
    case 'image': {
      const mimeType = stringField(block, 'mimeType')
      const data = stringField(block, 'data')
      if (mimeType?.startsWith('image/') === true && data !== undefined && data.length > 0)
        return { type: 'image', mediaType: mimeType, uri: `data:${mimeType};base64,${data}` }
      return { type: 'text', text: `[image${mimeType === undefined ? '' : ` ${mimeType}`} left out]` }
    }
    case 'resource':
      return { type: 'text', text: resourceText(block) }
    case 'resource_link': {
      const name = stringField(block, 'name')
      return {
        type: 'text',
        text: `[resource link ${stringField(block, 'uri') ?? 'unknown'}${name ? ` (${name})` : ''}]`,
      }
    }
    default:
      return { type: 'text', text: `[${block.type} content left out]` }
  }
}

/**
 * Turns a server's answer to a tool call into a Yoke tool result: the content blocks mapped
 * block by block; structured content, when the server sent no content, as its JSON text (servers
 * are asked to send both, so it is not repeated otherwise); `isError` as a failure the model
 * sees. The origin and any structured content go into `meta`, which is logged but never sent.
 *
 * @param result - the server's answer
 * @param origin - the server and the tool's name there
 * @returns the frozen tool result
 * @internal
 */
export function mcpCallResult(result: McpCallToolResult, origin: McpCallOrigin): ToolResult {
  const blocks = (Array.isArray(result.content) ? result.content : []).map(toBlock)
  const structured = result.structuredContent
  const keepStructured = structured !== undefined && isJsonValue(structured)
  if (blocks.length === 0 && keepStructured) blocks.push({ type: 'text', text: JSON.stringify(structured) })
  const isError = result.isError === true
  if (blocks.length === 0 && isError)
    blocks.push({ type: 'text', text: `the MCP tool "${origin.tool}" failed without saying why` })
  const meta: JsonObject = {
    mcp: {
      server: origin.server,
      tool: origin.tool,
      ...(keepStructured ? { structuredContent: structured as JsonValue } : {}),
    },
  }
  return toolResult({ content: blocks, meta, ...(isError ? { isError } : {}) })
}
