/**
 * Compile-time tests of `defineTool`'s argument inference. Checked by `tsc -p tsconfig.test.json`,
 * never run (vitest's include is `test/**\/*.test.ts`). Every `@ts-expect-error` line must stay an error.
 */
import { expectTypeOf } from 'vitest'
import { z } from 'zod'
import {
  defineTool,
  type JsonObject,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
  type ToolReturn,
  toolResult,
} from 'yoke'
import type { ToolArgs } from '../../src/tools/index.js'

// --- zod input: args is z.output<typeof input> --------------------------------------------------

const input = z.object({
  path: z.string(),
  depth: z.number().default(1),
  size: z.string().transform((text) => text.length),
  tags: z.array(z.string()).optional(),
})

// The output side differs from the input side: the default makes `depth` required, the transform makes `size` a number.
expectTypeOf<z.input<typeof input>>().toEqualTypeOf<{
  path: string
  depth?: number | undefined
  size: string
  tags?: string[] | undefined
}>()
expectTypeOf<ToolArgs<typeof input>>().toEqualTypeOf<z.output<typeof input>>()
expectTypeOf<ToolArgs<typeof input>>().toEqualTypeOf<{
  path: string
  depth: number
  size: number
  tags?: string[] | undefined
}>()

const scan = defineTool({
  name: 'scan',
  description: 'Scan a tree',
  input,
  isConcurrencySafe: (args) => {
    expectTypeOf(args).toEqualTypeOf<z.output<typeof input>>()
    return args.depth < 3
  },
  needsApproval: async (args, context) => {
    expectTypeOf(args.size).toEqualTypeOf<number>()
    expectTypeOf(context).toEqualTypeOf<ToolContext>()
    return false
  },
  execute: async (args, context) => {
    expectTypeOf(args).toEqualTypeOf<z.output<typeof input>>()
    expectTypeOf(args.depth).toEqualTypeOf<number>()
    expectTypeOf(args.size).toEqualTypeOf<number>()
    expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>()
    // @ts-expect-error `size` is a number after the transform, not its string input
    args.size.toUpperCase()
    // @ts-expect-error no such field
    args.missing
    return `scanned ${args.path}`
  },
})
expectTypeOf(scan).toEqualTypeOf<ToolDefinition<typeof input>>()
expectTypeOf(scan.parameters).toEqualTypeOf<JsonObject>()
expectTypeOf(scan.inputKind).toEqualTypeOf<'zod' | 'json-schema'>()

// A typed definition is still a plain ToolDefinition for registries and schedulers.
const generic: ToolDefinition = defineTool({
  name: 'read',
  description: 'Read',
  input: z.object({ path: z.string() }),
  execute: () => undefined,
})
void generic

// --- raw JSON Schema input: args is a JSON object -------------------------------------------------

defineTool({
  name: 'raw',
  description: 'Raw schema',
  input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: (args) => {
    expectTypeOf(args).toEqualTypeOf<JsonObject>()
    // @ts-expect-error a JSON value is not known to be a string
    args['path'].toUpperCase()
    return undefined
  },
})

// --- return forms ----------------------------------------------------------------------------------

defineTool({
  name: 'a',
  description: 'a',
  input,
  execute: () => toolResult({ content: [{ type: 'text', text: 'x' }] }),
})
defineTool({
  name: 'b',
  description: 'b',
  input,
  execute: () => toolResult({ content: 'x', meta: { n: 1 }, additionalContexts: ['note'] }),
})
defineTool({ name: 'c', description: 'c', input, execute: async () => undefined })
expectTypeOf<ReturnType<ToolDefinition['execute']>>().toEqualTypeOf<ToolReturn | Promise<ToolReturn>>()
expectTypeOf(toolResult).returns.toEqualTypeOf<ToolResult>()
// Any JSON value is a return, with no cast: objects, arrays, numbers, booleans, null.
const rows = [{ id: 1, name: 'Ada' }]
defineTool({ name: 'j1', description: 'j', input, execute: async () => ({ rows }) })
defineTool({ name: 'j2', description: 'j', input, execute: () => rows })
defineTool({ name: 'j3', description: 'j', input, execute: () => 42 })
defineTool({ name: 'j4', description: 'j', input, execute: () => false })
defineTool({ name: 'j5', description: 'j', input, execute: () => null })
// Rows typed by an interface (no index signature) compile too; their values are checked at run time.
interface Row {
  readonly id: number
  readonly tags: readonly string[]
}
const typedRows: readonly Row[] = [{ id: 1, tags: [] }]
defineTool({ name: 'j6', description: 'j', input, execute: async () => ({ rows: typedRows, total: 1 }) })
// @ts-expect-error a bigint is never JSON
defineTool({ name: 'd', description: 'd', input, execute: () => 42n })
// @ts-expect-error reasoning blocks are not tool content
toolResult({ content: [{ type: 'reasoning', text: 'x' }] })
// @ts-expect-error meta must be JSON
toolResult({ content: 'x', meta: { when: new Date() } })
// @ts-expect-error content is required
toolResult({ isError: true })

// --- the documented shape -------------------------------------------------------------------------------

// @ts-expect-error execute is required
defineTool({ name: 'g', description: 'g', input })
// @ts-expect-error timeoutMs is a number
defineTool({ name: 'h', description: 'h', input, timeoutMs: '5', execute: () => undefined })
// @ts-expect-error the input must be a zod schema or a JSON object
defineTool({ name: 'i', description: 'i', input: 'object', execute: () => undefined })
// @ts-expect-error an unknown key is refused
defineTool({ name: 'j', description: 'j', input, execute: () => undefined, foo: 1 })
