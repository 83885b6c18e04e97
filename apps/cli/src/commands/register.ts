// What every command's register function (`registerX(program, act)`) is given and builds with: the
// Act that wraps its action, the `--json` option of the read commands and the Examples section of
// its --help. program.ts makes the Act and calls the register functions; the commands import only
// this file, never program.ts.
import { Option, type Command } from 'commander';
import type { CommandContext } from '../context';
import type { ExitCode } from '../errors';

/** What a command's action does: its work, given the context and its commander Command; returns the exit code (default 0). */
export type Action = (ctx: CommandContext, command: Command) => Promise<ExitCode | void>;

/** Turns an Action into a commander action handler that records the exit code in `outcome`. */
export type Act = (action: Action) => (...args: unknown[]) => Promise<void>;

/** Adds an "Example(s):" section to a command's --help. */
export function withExamples(command: Command, ...examples: string[]): Command {
  return command.addHelpText('after', `\nExample${examples.length > 1 ? 's' : ''}:\n${examples.map((e) => `  ${e}`).join('\n')}\n`);
}

/** The `--json` flag of the read commands. */
export function jsonOption(description = "print the API's JSON instead of a table"): Option {
  return new Option('--json', description);
}
