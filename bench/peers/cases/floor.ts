/**
 * The hand-written floor: the least a durable loop can do. The caller keeps the messages; the same
 * fake model decision as the peers (a tool call, then text after the tool result), the tool body,
 * and the turn's records appended to a JSONL file with one write and one `fdatasync` at the end of
 * the turn. No validation, no freezing, no events beyond the turn's messages.
 */
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ANSWER, type Conversation, type Runtime, TOOL_ANSWER, TOOL_ARGUMENTS, TOOL_NAME } from './case.js'

interface FloorMessage {
  readonly role: 'user' | 'assistant' | 'tool'
  readonly text?: string
  readonly call?: { readonly id: string; readonly name: string; readonly arguments: string }
}

let calls = 0

/** The fake model: a tool call unless the last message is the tool's answer. */
function model(messages: readonly FloorMessage[]): FloorMessage {
  if (messages.at(-1)?.role === 'tool') return { role: 'assistant', text: ANSWER }
  return { role: 'assistant', call: { id: `call_${++calls}`, name: TOOL_NAME, arguments: TOOL_ARGUMENTS } }
}

/** The floor over a JSONL file per conversation in a temp dir. */
export async function floorRuntime(): Promise<Runtime> {
  const dir = await mkdtemp(join(tmpdir(), 'yoke-peers-floor-'))
  let conversations = 0
  return {
    async conversation(): Promise<Conversation> {
      const file: FileHandle = await open(join(dir, `c-${++conversations}.jsonl`), 'a')
      const messages: FloorMessage[] = []
      return {
        async turn(input) {
          let lines = ''
          const record = (message: FloorMessage): void => {
            messages.push(message)
            lines += `${JSON.stringify(message)}\n`
          }
          record({ role: 'user', text: input })
          for (;;) {
            const reply = model(messages)
            record(reply)
            if (reply.call === undefined) break
            JSON.parse(reply.call.arguments)
            record({ role: 'tool', text: TOOL_ANSWER })
          }
          await file.write(lines)
          await file.datasync()
        },
        close: () => file.close(),
      }
    },
    close: () => rm(dir, { recursive: true, force: true }),
  }
}
