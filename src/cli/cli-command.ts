import type { CliIo } from './cli-io.js'
import type { CommandGrammar, ParsedCommand } from './parse-command.js'

/** One `yoke` command: its grammar, its help, and what it does. */
export interface CliCommand {
  /** Flags and positionals, for {@link parseCommand}. */
  readonly grammar: CommandGrammar
  /** The synopsis line of `yoke --help`, e.g. `yoke inspect <session> [--dir <path>] …`. */
  readonly synopsis: string
  /** The text of `yoke <command> --help`, after the synopsis. */
  readonly help: string
  /**
   * Runs the command.
   *
   * @param parsed - the parsed arguments (never with `help`)
   * @param io - where to write
   * @returns the exit code
   */
  run(parsed: ParsedCommand, io: CliIo): Promise<number>
}
