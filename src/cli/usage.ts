/**
 * The one place where the `troupe` command line is parsed and where every
 * command's argument errors are written: each command declares the options
 * it takes and how many arguments, and a command line that does not fit is
 * answered with one line saying why and the command's usage (exit code 2).
 * @module
 */
import { parseArgs } from 'node:util';
import { nearest } from '../core/options.js';
import type { CliIo } from './io.js';

/** An option of the command line. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** May be given more than once (`--set a=1 --set b=2`); the values are a list. */
  multiple?: boolean;
}

/** A command (`run`, `squad init`, ...): its help text and what it accepts. */
export interface CommandSpec {
  /** The whole help text; its first paragraph (from `Usage:` to the first empty line) is the usage. */
  help: string;
  /** The options it takes besides `--help`. */
  options: readonly string[];
  /** How many arguments it takes (a function of the options when that depends on them), or a range (`{ min: 0, max: 1 }`: an optional one). */
  args: number | { min: number; max: number } | ((values: Readonly<Record<string, string | boolean | string[] | undefined>>) => number);
}

/** A parsed command line: the options by name and the positional arguments. */
export interface ParsedCommandLine<V> {
  values: V;
  positionals: string[];
  /** Each option as written, in order. */
  options: Array<{ name: string; rawName: string; value?: string | undefined; inlineValue?: boolean | undefined }>;
}

/**
 * Parse `argv` leniently (unknown options are kept, to be named in the error
 * of the command they were given to); {@link checkCommandLine} then checks
 * them against the command.
 */
export function parseCommandLine<V>(argv: readonly string[], options: Readonly<Record<string, OptionSpec>>): ParsedCommandLine<V> {
  const { values, positionals, tokens } = parseArgs({ args: [...argv], allowPositionals: true, strict: false, tokens: true, options: { ...options } });
  const given = tokens.flatMap((t) => (t.kind === 'option' ? [{ name: t.name, rawName: t.rawName, value: t.value, inlineValue: t.inlineValue }] : []));
  return { values: values as V, positionals, options: given };
}

/**
 * Why a command line does not fit `spec` (one line), or `undefined` when it
 * does: an option the command does not take, an option without its value,
 * a switch given a value, or the wrong number of arguments.
 */
export function checkCommandLine(
  parsed: ParsedCommandLine<Readonly<Record<string, string | boolean | string[] | undefined>>>,
  args: readonly string[],
  spec: CommandSpec,
  options: Readonly<Record<string, OptionSpec>>,
): string | undefined {
  for (const option of parsed.options) {
    const known = option.name === 'help' || spec.options.includes(option.name) ? options[option.name] : undefined;
    if (known === undefined) return `unknown option ${option.rawName}`;
    if (known.type === 'boolean' && option.value !== undefined) return `option ${option.rawName} takes no value`;
    if (known.type === 'string' && (option.value === undefined || (!option.inlineValue && option.value.startsWith('-')))) {
      return `option ${option.rawName} needs a value${option.value === undefined ? '' : ` (for a value that starts with "-", write ${option.rawName}=${option.value})`}`;
    }
  }
  if (typeof spec.args === 'object') {
    const { min, max } = spec.args;
    if (args.length < min || args.length > max) return `expected ${min} to ${max} arguments, got ${args.length}`;
  } else {
    const expected = typeof spec.args === 'number' ? spec.args : spec.args(parsed.values);
    if (args.length !== expected) return `expected ${expected} argument${expected === 1 ? '' : 's'}, got ${args.length}`;
  }
  return undefined;
}

/** The usage of a help text: its `Usage:` paragraph. */
export function usageOf(help: string): string {
  const start = help.indexOf('Usage:');
  const from = start === -1 ? help : help.slice(start);
  const end = from.indexOf('\n\n');
  return end === -1 ? from : from.slice(0, end);
}

/**
 * Answer a command line that does not fit `command`: one line saying why,
 * then the command's usage, on standard error. Resolves with exit code 2.
 */
/**
 * A command that does not exist: one line, with the nearest command when
 * one is close (`troupe: unknown command "valdate" (did you mean
 * "validate"?)`), and where the list is. Exit code 2.
 */
export function unknownCommand(io: CliIo, group: string, word: string, commands: readonly string[]): number {
  const name = group === '' ? 'troupe' : `troupe ${group}`;
  const near = nearest(word, commands);
  io.err(`${name}: unknown command "${word}"${near === undefined ? '' : ` (did you mean "${near}"?)`}; \`${name} --help\` lists the commands`);
  return 2;
}

export function usageError(io: CliIo, command: string, help: string, message: string): number {
  const name = command === '' ? 'troupe' : `troupe ${command}`;
  io.err(`${name}: ${message}\n\n${usageOf(help)}\n\nRun \`${name} --help\` for details.`);
  return 2;
}
