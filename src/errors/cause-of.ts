/**
 * Builds the `ErrorOptions` of an error options object that may carry a `cause`.
 *
 * @internal
 */
export function causeOf(options: { readonly cause?: unknown }): ErrorOptions | undefined {
  return 'cause' in options ? { cause: options.cause } : undefined
}
