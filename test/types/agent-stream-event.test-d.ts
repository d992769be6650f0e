import { expectTypeOf, test } from 'vitest'
import type {
  AgentRun,
  AgentStreamEvent,
  AssistantChunkData,
  SessionEvent,
  StreamChunk,
  ToolCallData,
  ToolResultData,
  TurnEndReason,
  UndeclaredSessionEvent,
} from 'yoke'
import { textStream } from 'yoke'

declare module 'yoke' {
  interface SessionEventDataMap {
    'acme/audit': { readonly note: string }
  }
}

declare const event: AgentStreamEvent

test('narrowing on type types the data of each core event', () => {
  if (event.type === 'assistant/chunk') {
    expectTypeOf(event.data.chunk).toEqualTypeOf<StreamChunk>()
    const data: AssistantChunkData = event.data
    expectTypeOf(data.step).toEqualTypeOf<number>()
  } else if (event.type === 'tool/call') {
    const data: ToolCallData = event.data
    expectTypeOf(data.arguments).toEqualTypeOf<string>()
  } else if (event.type === 'tool/result') {
    const data: ToolResultData = event.data
    expectTypeOf(data.step).toEqualTypeOf<number>()
  } else if (event.type === 'turn/end') {
    expectTypeOf(event.data.reason).toEqualTypeOf<TurnEndReason>()
  }
})

test('a declared plugin type narrows like a core one', () => {
  if (event.type === 'acme/audit') expectTypeOf(event.data.note).toEqualTypeOf<string>()
})

test('an undeclared type is the fallback member: a string type and any JSON data', () => {
  if (
    event.type !== 'assistant/chunk' &&
    event.type !== 'assistant/message' &&
    event.type !== 'tool/call' &&
    event.type !== 'tool/result' &&
    event.type !== 'turn/start' &&
    event.type !== 'turn/end' &&
    event.type !== 'step/start' &&
    event.type !== 'step/end' &&
    event.type !== 'user/message' &&
    event.type !== 'request/header' &&
    event.type !== 'request/context' &&
    event.type !== 'agent/inbox/spliced' &&
    event.type !== 'agent/run-options' &&
    event.type !== 'session/end-seed' &&
    event.type !== 'acme/audit'
  ) {
    expectTypeOf(event).toEqualTypeOf<UndeclaredSessionEvent>()
    expectTypeOf(event.type).toMatchTypeOf<string>()
  }
})

test('every stream event is still a SessionEvent, and a run iterates them', () => {
  expectTypeOf<AgentStreamEvent>().toMatchTypeOf<SessionEvent>()
  expectTypeOf<AgentRun>().toMatchTypeOf<AsyncIterable<AgentStreamEvent>>()
  expectTypeOf<AgentRun>().toMatchTypeOf<AsyncIterable<SessionEvent>>()
  expectTypeOf(textStream({} as AgentRun)).toMatchTypeOf<AsyncIterable<string>>()
})
