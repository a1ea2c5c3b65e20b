/**
 * Parsing a squad `team.md`: the team name, an optional `mode:` line and the
 * roster (a `## Members` table, another table with a Name column, or
 * `### Name` sections with a `- **Role:**` line). Pure text in, data out.
 * @module
 */
import { scanLines } from '../text/fences.js';
import { readableText } from '../text/lines.js';
import { charterCell, readHeading, readLabelled, splitRow, stripMarkdown } from './markdown.js';
import { DEFAULT_TEAM_MODE, TEAM_MODES, type TeamMode } from './preset.js';
import { displayName } from './slug.js';

export { stripMarkdown } from './markdown.js';

/** The team name when `team.md` has no `# ` heading. */
export const DEFAULT_TEAM_NAME = 'Squad Team';

/** One roster row as written in `team.md` (markdown and, in names, decorative emoji stripped; `charter` as written). */
export interface TeamMdMember {
  name: string;
  role: string;
  status?: string;
  /** The charter cell: the link target when it is a markdown link, else its text. */
  charter?: string;
}

/** Where the roster was found. */
export type RosterForm = 'members-table' | 'table' | 'sections' | 'none';

/** What {@link parseTeamMd} finds in a `team.md`. */
export interface TeamMd {
  name: string;
  /** The first `> ` quote line before the first section, if any. */
  description?: string;
  mode: TeamMode;
  members: TeamMdMember[];
  rosterForm: RosterForm;
  warnings: string[];
}

interface Table {
  heading: string;
  section: string;
  /** The table's lines, split into cells only when the table is read. */
  lines: string[];
}

/** The most roster members read from a `team.md` (real rosters have a handful). */
export const MAX_ROSTER = 1000;

/** Members read, and whether the roster went on past {@link MAX_ROSTER}. */
interface Roster {
  members: TeamMdMember[];
  cut: boolean;
}

/** A line of `team.md` outside fenced code blocks. */
interface Line {
  text: string;
  kind: 'text' | 'heading' | 'table';
  /** For headings: the level. */
  level?: number;
}

const MEMBERS_HEADING = /^(?:team\s+)?(?:members|roster)\b/i;
const NOT_ROSTER_HEADING = /coordinator|coding agent|issue source|alumni|former/i;
const MODE_VALUE = /^[\w-]*$/;
const SEPARATOR_CELL = /^:?-+:?$/;

function isSeparatorRow(cells: string[]): boolean {
  let filled = 0;
  for (const cell of cells) {
    if (cell === '') continue;
    filled++;
    if (!SEPARATOR_CELL.test(cell.replace(/\s+/g, ''))) return false;
  }
  return filled > 0;
}

/** One pass over the text (fenced code blocks skipped): the title, the tables, the other lines. */
function scan(text: string): { title?: string; tables: Table[]; lines: Line[] } {
  const tables: Table[] = [];
  const lines: Line[] = [];
  let title: string | undefined;
  let heading = '';
  let section = '';
  let current: Table | undefined;
  scanLines(text, ({ text: line, kind }) => {
    if (kind !== 'text') {
      current = undefined;
      return;
    }
    if (line.trim().startsWith('|')) {
      if (current === undefined) {
        current = { heading, section, lines: [] };
        tables.push(current);
      }
      current.lines.push(line);
      lines.push({ text: line, kind: 'table' });
      return;
    }
    current = undefined;
    const h = readHeading(line);
    if (h) {
      const name = stripMarkdown(h.text);
      if (h.level === 1 && title === undefined) title = name;
      heading = name;
      if (h.level <= 2) section = name;
      lines.push({ text: line, kind: 'heading', level: h.level });
      return;
    }
    lines.push({ text: line, kind: 'text' });
  });
  return title === undefined ? { tables, lines } : { title, tables, lines };
}

function membersOf(table: Table): Roster | undefined {
  const first = table.lines[0];
  if (first === undefined) return undefined;
  const names = splitRow(first).map((c) => stripMarkdown(c).toLowerCase());
  const col = (...wanted: string[]) => names.findIndex((n) => wanted.includes(n));
  const nameCol = col('name', 'member', 'members', 'agent');
  if (nameCol < 0) return undefined;
  const roleCol = col('role');
  const charterCol = col('charter');
  const statusCol = col('status');
  const members: TeamMdMember[] = [];
  for (let row = 1; row < table.lines.length; row++) {
    if (members.length === MAX_ROSTER) return { members, cut: true };
    const cells = splitRow(table.lines[row]!);
    if (isSeparatorRow(cells)) continue;
    const name = displayName(stripMarkdown(cells[nameCol] ?? ''));
    if (name === '' || ['name', 'member', 'members'].includes(name.toLowerCase())) continue;
    const member: TeamMdMember = { name, role: roleCol >= 0 ? stripMarkdown(cells[roleCol] ?? '') : '' };
    const status = statusCol >= 0 ? stripMarkdown(cells[statusCol] ?? '') : '';
    if (status !== '') member.status = status;
    const charter = charterCol >= 0 ? charterCell(cells[charterCol] ?? '') : '';
    if (charter !== '' && !/^[-—–]+$/.test(charter)) member.charter = charter;
    members.push(member);
  }
  return { members, cut: false };
}

function sectionMembers(lines: readonly Line[]): Roster {
  const members: TeamMdMember[] = [];
  let current: TeamMdMember | undefined;
  let hasRole = false;
  const flush = () => {
    if (current && hasRole && current.name !== '') members.push(current);
  };
  for (const line of lines) {
    if (members.length === MAX_ROSTER) return { members, cut: true };
    if (line.kind === 'heading') {
      flush();
      current = line.level === 3 ? { name: displayName(stripMarkdown(readHeading(line.text)?.text ?? '')), role: '' } : undefined;
      hasRole = false;
      continue;
    }
    const field = current ? readLabelled(line.text, ['role', 'status', 'charter']) : undefined;
    if (!current || !field) continue;
    const { key, value } = field;
    if (key === 'role') {
      current.role = stripMarkdown(value);
      hasRole = true;
    } else if (key === 'status' && stripMarkdown(value) !== '') current.status = stripMarkdown(value);
    else if (key === 'charter' && charterCell(value) !== '') current.charter = charterCell(value);
  }
  flush();
  return { members, cut: false };
}

/** The value of a `mode:` line, if the line is one. */
function modeOf(line: string): string | undefined {
  const read = readLabelled(line, ['mode']);
  if (!read) return undefined;
  let value = read.value.trim();
  if ('`"\''.includes(value[0] ?? 'x')) value = value.slice(1);
  if ('`"\''.includes(value.at(-1) ?? 'x')) value = value.slice(0, -1);
  return MODE_VALUE.test(value) ? value : undefined;
}

/**
 * Parse the text of a `team.md`. Odd input gives an empty roster and
 * warnings; fenced code blocks are skipped; LF, CRLF, CR and a BOM read the
 * same. Linear; a non-string throws a `ConfigurationError` (`invalid_argument`).
 *
 * @example
 * ```ts
 * parseTeamMd('# Review\n\n## Members\n| Name | Role |\n|---|---|\n| Ada | Lead |').members;
 * // [{ name: 'Ada', role: 'Lead' }]
 * ```
 */
export function parseTeamMd(text: string): TeamMd {
  const { title, tables, lines } = scan(readableText(text, 'the text of parseTeamMd'));
  const warnings: string[] = [];
  let mode: TeamMode = DEFAULT_TEAM_MODE;
  let modeValue: string | undefined;
  for (const line of lines) {
    if (line.kind !== 'text') continue;
    modeValue = modeOf(line.text);
    if (modeValue !== undefined) break;
  }
  if (modeValue !== undefined) {
    const value = modeValue.toLowerCase();
    if ((TEAM_MODES as readonly string[]).includes(value)) mode = value as TeamMode;
    else warnings.push(`team.md: unknown mode "${value}", using ${DEFAULT_TEAM_MODE}`);
  }
  const name = title !== undefined && title !== '' ? title : DEFAULT_TEAM_NAME;
  const firstSection = lines.findIndex((l) => l.kind === 'table' || (l.kind === 'heading' && (l.level ?? 1) >= 2));
  const quoteText = (l: Line) => (l.kind === 'text' && l.text.trimStart().startsWith('>') ? l.text.trimStart().slice(1).trim() : '');
  const quote = lines.slice(0, firstSection < 0 ? lines.length : firstSection).find((l) => quoteText(l) !== '');
  const described = quote ? { description: stripMarkdown(quoteText(quote)) } : {};

  const done = (roster: Roster, rosterForm: RosterForm): TeamMd => {
    if (roster.cut) warnings.push(`team.md: the roster lists more than ${MAX_ROSTER} members; only the first ${MAX_ROSTER} are read`);
    return { name, ...described, mode, members: roster.members, rosterForm, warnings };
  };
  const membersTable = tables.find((t) => MEMBERS_HEADING.test(t.heading) || MEMBERS_HEADING.test(t.section));
  if (membersTable) {
    const roster = membersOf(membersTable) ?? { members: [], cut: false };
    if (roster.members.length === 0) warnings.push('team.md: the Members table has no member rows');
    return done(roster, 'members-table');
  }
  for (const table of tables) {
    if (NOT_ROSTER_HEADING.test(table.heading)) continue;
    const roster = membersOf(table);
    if (roster === undefined) continue;
    if (roster.members.length === 0) warnings.push('team.md: the roster table has no member rows');
    return done(roster, 'table');
  }
  const roster = sectionMembers(lines);
  if (roster.members.length > 0) return done(roster, 'sections');
  warnings.push('team.md: no roster found (no Members table, no table with a Name column, no ### sections with a Role line)');
  return { name, ...described, mode, members: [], rosterForm: 'none', warnings };
}
