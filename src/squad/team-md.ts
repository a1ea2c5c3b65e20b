/**
 * Parsing a squad `team.md`: the team name, an optional `mode:` line and the
 * roster (a `## Members` table, another table with a Name column, or
 * `### Name` sections with a `- **Role:**` line). Pure text in, data out.
 * @module
 */
import { DEFAULT_TEAM_MODE, TEAM_MODES, type TeamMode } from './preset.js';

/** The team name when `team.md` has no `# ` heading. */
export const DEFAULT_TEAM_NAME = 'Squad Team';

/** One roster row as written in `team.md` (markdown stripped, except `charter`). */
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
  rows: string[][];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HEADING = /^(#{1,6})[ \t]+(.*)$/;
const SEPARATOR_CELL = /^:?-+:?$/;
const MEMBERS_HEADING = /^(?:team\s+)?(?:members|roster)\b/i;
const NOT_ROSTER_HEADING = /coordinator|coding agent|issue source|alumni|former/i;
const MODE_LINE = /^\s*(?:[-*]\s+)?(?:\*\*|__)?mode(?::(?:\*\*|__)|(?:\*\*|__)?\s*:)\s*[`"']?([\w-]*)[`"']?\s*$/i;
const ROLE_LINE = /^\s*(?:[-*]\s+)?(?:\*\*|__)?(role|status|charter)(?::(?:\*\*|__)|(?:\*\*|__)?\s*:)\s*(.*)$/i;

/**
 * Strip inline markdown from a cell: links and images keep their text;
 * bold, italics, strike-through, backticks and HTML tags go.
 */
export function stripMarkdown(text: string): string {
  // Bounded repetitions keep every pattern linear on hostile input.
  return text
    .replace(/!?\[([^\]\n]{0,200})\]\([^)\n]{0,300}\)/g, '$1')
    .replace(/<[^<>\n]{0,300}>/g, '')
    .replace(/`+/g, '')
    .replace(/(\*\*|__|~~)([^\n]{0,300}?)\1/g, '$2')
    .replace(/(^|[\s(])[*_](\S(?:[^\n]{0,300}?\S)?)[*_](?=$|[\s.,;:!?)])/g, '$1$2')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A heading's text without an optional closing run of `#`. */
function headingText(text: string): string {
  const trimmed = text.trimEnd();
  let end = trimmed.length;
  while (end > 0 && trimmed.charAt(end - 1) === '#') end--;
  return end < trimmed.length && (end === 0 || /\s/.test(trimmed.charAt(end - 1))) ? trimmed.slice(0, end).trimEnd() : trimmed;
}

/** The cells of a table row; `\|` is a literal bar. */
export function splitRow(line: string): string[] {
  let body = line.trim();
  if (body.startsWith('|')) body = body.slice(1);
  if (body.endsWith('|') && !body.endsWith('\\|')) body = body.slice(0, -1);
  return body.split(/(?<!\\)\|/).map((cell) => cell.replace(/\\\|/g, '|').trim());
}

function isSeparatorRow(cells: string[]): boolean {
  const filled = cells.filter((c) => c !== '');
  return filled.length > 0 && filled.every((c) => SEPARATOR_CELL.test(c.replace(/\s+/g, '')));
}

/** The link target of a markdown link cell, else the cell's stripped text. */
function charterCell(cell: string): string {
  const target = /\[[^\]\n]{0,200}\]\(([^)\n]{0,300})\)/.exec(cell)?.[1];
  if (target === undefined) return stripMarkdown(cell);
  return (target.trim().split(/\s/)[0] ?? '').replace(/^<|>$/g, '');
}

function scan(text: string): { title?: string; tables: Table[]; lines: { text: string; kind: 'text' | 'heading' | 'table' }[] } {
  const tables: Table[] = [];
  const lines: { text: string; kind: 'text' | 'heading' | 'table' }[] = [];
  let title: string | undefined;
  let heading = '';
  let section = '';
  let fence: string | undefined;
  let current: Table | undefined;
  for (const line of text.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (fence !== undefined || marker !== undefined) {
      if (marker !== undefined) fence = fence === undefined ? marker.charAt(0) : marker.charAt(0) === fence ? undefined : fence;
      current = undefined;
      continue;
    }
    if (line.trim().startsWith('|')) {
      if (current === undefined) {
        current = { heading, section, rows: [] };
        tables.push(current);
      }
      current.rows.push(splitRow(line));
      lines.push({ text: line, kind: 'table' });
      continue;
    }
    current = undefined;
    const h = HEADING.exec(line);
    if (h) {
      const level = (h[1] ?? '').length;
      const name = stripMarkdown(headingText(h[2] ?? ''));
      if (level === 1 && title === undefined) title = name;
      heading = name;
      if (level <= 2) section = name;
      lines.push({ text: line, kind: 'heading' });
      continue;
    }
    lines.push({ text: line, kind: 'text' });
  }
  return title === undefined ? { tables, lines } : { title, tables, lines };
}

function membersOf(table: Table): TeamMdMember[] | undefined {
  const [header, ...body] = table.rows;
  if (!header) return undefined;
  const names = header.map((c) => stripMarkdown(c).toLowerCase());
  const col = (...wanted: string[]) => names.findIndex((n) => wanted.includes(n));
  const nameCol = col('name', 'member', 'members', 'agent');
  if (nameCol < 0) return undefined;
  const roleCol = col('role');
  const charterCol = col('charter');
  const statusCol = col('status');
  const members: TeamMdMember[] = [];
  for (const cells of body) {
    if (isSeparatorRow(cells)) continue;
    const name = stripMarkdown(cells[nameCol] ?? '');
    if (name === '' || ['name', 'member', 'members'].includes(name.toLowerCase())) continue;
    const member: TeamMdMember = { name, role: roleCol >= 0 ? stripMarkdown(cells[roleCol] ?? '') : '' };
    const status = statusCol >= 0 ? stripMarkdown(cells[statusCol] ?? '') : '';
    if (status !== '') member.status = status;
    const charter = charterCol >= 0 ? charterCell(cells[charterCol] ?? '') : '';
    if (charter !== '' && !/^[-—–]+$/.test(charter)) member.charter = charter;
    members.push(member);
  }
  return members;
}

function sectionMembers(text: string): TeamMdMember[] {
  const members: TeamMdMember[] = [];
  let current: TeamMdMember | undefined;
  let hasRole = false;
  const flush = () => {
    if (current && hasRole) members.push(current);
  };
  for (const line of text.split('\n')) {
    const h = HEADING.exec(line);
    if (h) {
      flush();
      current = (h[1] ?? '').length === 3 ? { name: stripMarkdown(headingText(h[2] ?? '')), role: '' } : undefined;
      hasRole = false;
      continue;
    }
    const field = current ? ROLE_LINE.exec(line) : null;
    if (!current || !field) continue;
    const key = (field[1] ?? '').toLowerCase();
    const value = field[2] ?? '';
    if (key === 'role') {
      current.role = stripMarkdown(value);
      hasRole = true;
    } else if (key === 'status' && stripMarkdown(value) !== '') current.status = stripMarkdown(value);
    else if (key === 'charter' && charterCell(value) !== '') current.charter = charterCell(value);
  }
  flush();
  return members.filter((m) => m.name !== '');
}

/**
 * Parse the text of a `team.md`. Never throws: odd input gives an empty
 * roster and warnings.
 *
 * @example
 * ```ts
 * parseTeamMd('# Review\n\n## Members\n| Name | Role |\n|---|---|\n| Ada | Lead |').members;
 * // [{ name: 'Ada', role: 'Lead' }]
 * ```
 */
export function parseTeamMd(text: string): TeamMd {
  const { title, tables, lines } = scan(text);
  const warnings: string[] = [];
  let mode: TeamMode = DEFAULT_TEAM_MODE;
  const modeLine = lines.find((l) => l.kind === 'text' && MODE_LINE.test(l.text));
  if (modeLine) {
    const value = (MODE_LINE.exec(modeLine.text)?.[1] ?? '').toLowerCase();
    if ((TEAM_MODES as readonly string[]).includes(value)) mode = value as TeamMode;
    else warnings.push(`team.md: unknown mode "${value}", using ${DEFAULT_TEAM_MODE}`);
  }
  const name = title !== undefined && title !== '' ? title : DEFAULT_TEAM_NAME;
  const firstSection = lines.findIndex((l) => l.kind === 'table' || /^#{2,}\s/.test(l.text));
  const quote = lines.slice(0, firstSection < 0 ? lines.length : firstSection).find((l) => l.kind === 'text' && /^\s*>\s*\S/.test(l.text));
  const described = quote ? { description: stripMarkdown(quote.text.replace(/^\s*>\s*/, '')) } : {};

  const membersTable = tables.find((t) => MEMBERS_HEADING.test(t.heading) || MEMBERS_HEADING.test(t.section));
  if (membersTable) {
    const members = membersOf(membersTable) ?? [];
    if (members.length === 0) warnings.push('team.md: the Members table has no member rows');
    return { name, ...described, mode, members, rosterForm: 'members-table', warnings };
  }
  for (const table of tables) {
    if (NOT_ROSTER_HEADING.test(table.heading)) continue;
    const members = membersOf(table);
    if (members === undefined) continue;
    if (members.length === 0) warnings.push('team.md: the roster table has no member rows');
    return { name, ...described, mode, members, rosterForm: 'table', warnings };
  }
  const members = sectionMembers(text);
  if (members.length > 0) return { name, ...described, mode, members, rosterForm: 'sections', warnings };
  warnings.push('team.md: no roster found (no Members table, no table with a Name column, no ### sections with a Role line)');
  return { name, ...described, mode, members: [], rosterForm: 'none', warnings };
}
