/**
 * A Yoke {@link ModelRequest} → the AI SDK call options of one specification version.
 *
 * @module
 */
import type { ModelRequest } from '../model/model-request.js'
import type { AiSdkSpecificationVersion } from './ai-sdk-language-model.js'
import type { AiSdkProviderOptionsValue } from './check-provider-options.js'
import { toPrompt } from './to-prompt.js'

/** The reasoning levels of the v4 `reasoning` call option. */
const reasoningLevels: ReadonlySet<string> = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])

/**
 * Builds the call options: prompt, function tools, tool choice, response format, output ceiling,
 * temperature, stop sequences and the abort signal; for v4 also `reasoning` when the request's
 * effort is one of its levels (earlier versions have no portable reasoning option).
 *
 * @param request - the validated request
 * @param version - the model's specification version
 * @param providerOptions - the adapter's call-level provider options, if any
 * @returns the options, as plain data
 * @internal
 */
export function toCallOptions(
  request: ModelRequest,
  version: AiSdkSpecificationVersion,
  providerOptions?: AiSdkProviderOptionsValue,
): Readonly<Record<string, unknown>> {
  const options: Record<string, unknown> = {
    prompt: toPrompt(request.system, request.messages, version),
    abortSignal: request.signal,
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    options['tools'] = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters,
    }))
  }
  const choice = request.toolChoice
  if (choice !== undefined) {
    options['toolChoice'] = typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.name }
  }
  const format = request.responseFormat
  if (format !== undefined) {
    options['responseFormat'] = { type: 'json', schema: format.schema, name: format.name ?? 'output' }
  }
  if (providerOptions !== undefined) options['providerOptions'] = providerOptions
  if (request.maxTokens !== undefined) options['maxOutputTokens'] = request.maxTokens
  if (request.temperature !== undefined) options['temperature'] = request.temperature
  if (request.stop !== undefined) options['stopSequences'] = [...request.stop]
  if (version === 'v4' && request.reasoningEffort !== undefined && reasoningLevels.has(request.reasoningEffort)) {
    options['reasoning'] = request.reasoningEffort
  }
  return options
}
