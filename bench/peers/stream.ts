/**
 * The streaming figure: one step streaming many text deltas from the loopback server, through a raw
 * floor, the AI SDK's `streamText` with its OpenAI-compatible provider, and Yoke's `openaiCompatible`
 * adapter in a fresh agent per turn (memory persistence).
 */
import { expectAnswer, type Runtime } from './cases/case.js'
import type { Job, StreamResult } from './job.js'
import { STREAMED_DELTA } from './sse-server-body.js'

const cpuNow = (): number => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

/** The raw floor of a streamed step: fetch, split the SSE lines, `JSON.parse`, push the text. */
async function rawStream(url: string): Promise<string> {
  const response = await fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  })
  if (response.body === null) throw new Error('no body')
  const decoder = new TextDecoder()
  const parts: string[] = []
  let buffer = ''
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true })
    const lines = buffer.split('\n')
    buffer = lines.pop() ?? ''
    for (const line of lines) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue
      const chunk = JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] }
      const text = chunk.choices[0]?.delta.content
      if (text !== undefined) parts.push(text)
    }
  }
  return parts.join('')
}

type StreamJob = Extract<Job, { kind: 'stream' }>

/** CPU and wall per streamed delta of one stream case, over `turns` turns after `warmup`. */
export async function measureStream(job: StreamJob): Promise<StreamResult> {
  let step: () => Promise<void>
  let runtime: Runtime | undefined
  const expected = STREAMED_DELTA.repeat(job.deltas)
  if (job.case === 'stream-floor') {
    step = async () => expectAnswer('floor', await rawStream(job.url), expected)
  } else if (job.case === 'stream-ai-sdk') {
    // Each case loads only its own packages, so its peak RSS is its own.
    const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible')
    const { streamText } = await import('ai')
    const provider = createOpenAICompatible({ name: 'loopback', baseURL: job.url })
    const model = provider.chatModel('fake')
    step = async () => {
      const result = streamText({ model, prompt: 'hi' })
      const parts: string[] = []
      for await (const part of result.textStream) parts.push(part)
      expectAnswer('ai-sdk', parts.join(''), expected)
    }
  } else {
    const { openaiCompatible } = await import('../../dist/index.js')
    const { yokeRuntime } = await import('./cases/yoke.js')
    const created = await yokeRuntime('memory', {
      adapter: openaiCompatible({ baseURL: job.url, model: 'fake' }),
      answer: expected,
      noTools: true,
    })
    runtime = created
    step = async () => {
      const conversation = await created.conversation()
      await conversation.turn('hi')
      await conversation.close()
    }
  }
  try {
    for (let index = 0; index < job.warmup; index++) await step()
    const cpu = cpuNow()
    const started = performance.now()
    for (let index = 0; index < job.turns; index++) await step()
    const deltas = job.turns * job.deltas
    return {
      kind: 'stream',
      cpuPerDelta: (cpuNow() - cpu) / deltas,
      wallPerDelta: ((performance.now() - started) * 1_000) / deltas,
    }
  } finally {
    await runtime?.close()
  }
}
