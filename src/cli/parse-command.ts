/**
 * Argument parsing of one `yoke` command with `node:util` `parseArgs`, turning every parse
 * failure into a {@link CliUsageError} (exit code 2).
 *
 * @module
 */
import { parseArgs } from 'node:util'
import { CliUsageError } from './cli-usage-error.js'

/** The flags of a command: name → `'string'` (takes a value) or `'boolean'`. */
export type FlagKinds = Readonly<Record<string, 'string' | 'boolean'>>

/** The grammar of one command. */
export interface CommandGrammar {
  /** The command name, e.g. `'inspect'`. */
  readonly name: string
  /** Its flags (`--help` / `-h` is added to every command). */
  readonly flags: FlagKinds
  /** The names of its positional arguments, all required, e.g. `['session']`. */
  readonly positionals: readonly string[]
}

/** A parsed command line. */
export interface ParsedCommand {
  /** Flag values by name: a string, `true`, or `undefined` when absent. */
  readonly flags: Readonly<Record<string, string | boolean | undefined>>
  /** The positional arguments, exactly as many as the grammar names. */
  readonly positionals: readonly string[]
  /** Whether `--help` (or `-h`) was given; then the rest is not checked. */
  readonly help: boolean
}

function flagNamed(message: string): string {
  return /'(-{1,2}[^' ]+)/.exec(message)?.[1] ?? 'a flag'
}

function usageOf(error: unknown, command: string): CliUsageError {
  const code = typeof error === 'object' && error !== null ? (error as { readonly code?: unknown }).code : undefined
  const message = error instanceof Error ? error.message : String(error)
  const hint = `run "yoke ${command} --help"`
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
    return new CliUsageError(`unknown flag "${flagNamed(message)}" for "yoke ${command}"; ${hint}`)
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = flagNamed(message)
    const detail = /does not take an argument/.test(message) ? 'takes no value' : 'needs a value'
    return new CliUsageError(`${flag} ${detail} in "yoke ${command}"; ${hint}`)
  }
  return new CliUsageError(`cannot parse the arguments of "yoke ${command}": ${message}; ${hint}`)
}

/**
 * Parses the arguments after the command name.
 *
 * @param grammar - the command's flags and positionals
 * @param argv - the arguments after the command name
 * @returns the flags and positionals
 * @throws {@link CliUsageError} for an unknown flag, a flag without its value (or with one it
 *   does not take), a missing or an extra positional argument
 */
export function parseCommand(grammar: CommandGrammar, argv: readonly string[]): ParsedCommand {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  }
  for (const [name, type] of Object.entries(grammar.flags)) options[name] = { type }
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] }
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })
  } catch (error) {
    throw usageOf(error, grammar.name)
  }
  const flags: Record<string, string | boolean | undefined> = {}
  for (const [name, value] of Object.entries(parsed.values)) flags[name] = Array.isArray(value) ? value.at(-1) : value
  const help = flags['help'] === true
  if (help) return { flags, positionals: parsed.positionals, help }
  const expected = grammar.positionals
  if (parsed.positionals.length < expected.length) {
    const missing = expected[parsed.positionals.length] as string
    throw new CliUsageError(`"yoke ${grammar.name}" needs a <${missing}> argument; run "yoke ${grammar.name} --help"`)
  }
  if (parsed.positionals.length > expected.length) {
    const extra = parsed.positionals[expected.length] as string
    throw new CliUsageError(
      `unexpected argument ${JSON.stringify(extra)} for "yoke ${grammar.name}"; run "yoke ${grammar.name} --help"`,
    )
  }
  return { flags, positionals: parsed.positionals, help }
}

/**
 * A string flag's value.
 *
 * @param parsed - the parsed command
 * @param name - the flag name
 * @returns its value, or `undefined` when absent
 */
export function stringFlag(parsed: ParsedCommand, name: string): string | undefined {
  const value = parsed.flags[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * A boolean flag's value.
 *
 * @param parsed - the parsed command
 * @param name - the flag name
 * @returns whether it was given
 */
export function booleanFlag(parsed: ParsedCommand, name: string): boolean {
  return parsed.flags[name] === true
}
