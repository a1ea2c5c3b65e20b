/**
 * The contract of an agent-file format module: a pure reader that maps a
 * file's front matter onto an {@link AgentDefinition} (with warnings for
 * what it keeps but does not use) and a writer that writes a definition
 * back as a file of that format. No I/O, and no format knows another.
 * @module
 */
import type { AgentDefinition, AgentFormat, AgentIssue, AgentParseResult } from '../definition.js';

/** What a format reader gets: the front matter's data and the body of one file. */
export interface AgentFileInput {
  /** The front matter, read as data. */
  data: Record<string, unknown>;
  /** The text after the front matter: the system prompt. */
  body: string;
  /** The name when the front matter has none: the file's name without its extensions (`x.agent.md` → `x`). */
  name?: string;
  /** The file, relative to the folder it was loaded from (for messages). */
  file?: string;
}

/** What a format writer produces. */
export interface AgentFileOutput {
  /** The file's text: front matter and body. */
  text: string;
  /** The file name the format's tool expects (`reviewer.agent.md`); the name is part of the definition for formats that take it from the file. */
  fileName: string;
  /** Fields of the definition the format has no place for (they are not written). */
  warnings: AgentIssue[];
}

/** One agent-file format: its reader and its writer. */
export interface AgentFormatModule {
  /** The format's id. */
  readonly format: AgentFormat;
  /** Its name for people (`Claude Code`). */
  readonly label: string;
  /**
   * True when the format's tool reads a single-line plain value holding an
   * unquoted `: ` that strict YAML refuses (see `readFrontMatterLeniently`).
   */
  readonly lenient: boolean;
  /** Map a file's front matter and body onto a definition; never throws for bad input. */
  read(input: AgentFileInput): AgentParseResult<AgentDefinition>;
  /** Write a definition as a file of this format. */
  write(def: AgentDefinition): AgentFileOutput;
}
