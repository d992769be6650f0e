/**
 * The structural shape of an AI SDK language model, so `yoke/ai-sdk` needs no runtime import of
 * the AI SDK packages: any object a provider package returns fits it.
 *
 * @module
 */

/** The specification versions of AI SDK language models that `aiSdkModel` speaks. */
export type AiSdkSpecificationVersion = 'v2' | 'v3' | 'v4'

/**
 * What Yoke reads of an AI SDK language model (`LanguageModelV2`, `LanguageModelV3` or
 * `LanguageModelV4` from `@ai-sdk/provider`): its version, names and `doStream`. The call options
 * and stream parts are checked at run time, part by part, so a provider built against any of the
 * three versions fits without a type import.
 */
export interface AiSdkLanguageModel {
  /** `'v2'`, `'v3'` or `'v4'`; anything else is refused by `aiSdkModel`. */
  readonly specificationVersion: string
  /** The provider id, e.g. `'openai.chat'`. */
  readonly provider: string
  /** The provider's model id, e.g. `'gpt-4o-mini'`. */
  readonly modelId: string
  /**
   * Streams one call. The parameter is typed `never` so that every version's own call-options
   * type is accepted here; Yoke builds the options for the model's version.
   */
  doStream(options: never): PromiseLike<AiSdkStreamResult>
}

/** What `doStream` resolves to, as far as Yoke reads it. */
export interface AiSdkStreamResult {
  /** The stream parts of the call. */
  readonly stream: ReadableStream<unknown>
}
