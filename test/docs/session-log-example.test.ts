import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { createSession } from 'yoke'
import { fakeClock } from 'yoke/testing'

test('the worked example of docs/session-log.md is a valid log', () => {
  const markdown = readFileSync(new URL('../../docs/session-log.md', import.meta.url), 'utf8')
  const block = /```jsonl\n([\s\S]*?)```/.exec(markdown)?.[1] ?? ''
  const events: unknown[] = block
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown)
  expect(events).toHaveLength(17)
  const session = createSession({ id: 'docs', seed: events, clock: fakeClock({ now: 1000 }) })
  expect(session.deriveMessages().map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
  expect(session.requestHeader()?.config.model).toBe('deepseek-chat')
  expect(session.at(17)?.type).toBe('session/end-seed')
})
