/**
 * The pre-request checks of the OpenAI-compatible adapter: images and reasoning
 * efforts the model cannot take fail before any I/O.
 *
 * @module
 */
import type { ImageBlock } from '../../session/content-block.js'
import type { LlmFailure } from '../../session/llm-failure.js'
import type { Message } from '../../session/message.js'
import { modelFailure } from '../failure-defaults.js'
import type { ModelInfo } from '../model-adapter.js'
import type { ModelRequest } from '../model-request.js'

const sendableScheme = /^(data|https?):/i

function imagesOf(message: Message): ImageBlock[] {
  const images: ImageBlock[] = []
  for (const block of message.content) {
    if (block.type === 'image') images.push(block)
    else if (block.type === 'tool-result')
      for (const inner of block.content) if (inner.type === 'image') images.push(inner)
  }
  return images
}

/**
 * Checks a request against what the model accepts: every image needs a `data:` or `http(s):`
 * URI and a model whose `inputModalities` (when listed) include `image` (`UNSUPPORTED_CONTENT`);
 * the effort must be one of `reasoningEfforts` (when listed; `UNSUPPORTED_REASONING_EFFORT`,
 * `detail.allowed`). Pure.
 *
 * @internal
 * @returns the pre-request failure, or `undefined` when the request can be sent
 */
export function checkRequest(request: ModelRequest, info: ModelInfo | undefined): LlmFailure | undefined {
  const effort = request.reasoningEffort
  const allowed = info?.reasoningEfforts
  if (effort !== undefined && allowed !== undefined && !allowed.includes(effort)) {
    return modelFailure(
      'UNSUPPORTED_REASONING_EFFORT',
      `model ${request.model} does not offer reasoning effort "${effort}" (allowed: ${allowed.join(', ')})`,
      'pre-request',
      { detail: { field: 'reasoningEffort', value: effort, allowed: [...allowed] } },
    )
  }
  const acceptsImages = info?.inputModalities === undefined || info.inputModalities.includes('image')
  for (const [messageIndex, message] of request.messages.entries()) {
    for (const image of imagesOf(message)) {
      if (!acceptsImages) {
        return modelFailure(
          'UNSUPPORTED_CONTENT',
          `model ${request.model} does not accept image input`,
          'pre-request',
          {
            detail: { messageIndex, mediaType: image.mediaType },
          },
        )
      }
      if (!sendableScheme.test(image.uri)) {
        const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(image.uri)?.[1]?.slice(0, 32) ?? '(none)'
        return modelFailure(
          'UNSUPPORTED_CONTENT',
          `an image URI with scheme "${scheme}" cannot be sent; use a data:, http: or https: URI`,
          'pre-request',
          { detail: { messageIndex, scheme } },
        )
      }
    }
  }
  return undefined
}
