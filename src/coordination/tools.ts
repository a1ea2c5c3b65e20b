/**
 * The lead's protocol: coordination actions as tools (when the adapter
 * supports tools) and as lines of text (otherwise), both turned into the
 * same {@link LeadAction}s. Also the worker's `ask_lead` tool and
 * `QUESTION:` line.
 * @module
 */
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../core/tools.js';
import { scanSpans } from '../text/fences.js';
import { isWhiteSpace, readableText } from '../text/lines.js';
import { taskInputSchema, type TaskInput } from './task-store.js';
import { defined } from '../core/defined.js';

/** Something the lead decided. */
export type LeadAction =
  | { type: 'message'; to: string; text: string }
  | { type: 'review'; taskId: string; approved: boolean; feedback?: string }
  | { type: 'add'; task: TaskInput }
  | { type: 'split'; taskId: string; parts: TaskInput[] }
  | { type: 'cancel'; taskId: string; reason?: string }
  | { type: 'reassign'; taskId: string; to?: string }
  | { type: 'spawn'; worker: string }
  | { type: 'shutdown'; worker: string; reason?: string }
  | { type: 'conclude'; summary: string };

/** The names of the lead's coordination tools, in the order the session declares them. */
export const COORDINATION_TOOL_NAMES = [
  'spawn_worker',
  'shutdown_worker',
  'send_message',
  'list_tasks',
  'add_task',
  'split_task',
  'cancel_task',
  'reassign_task',
  'review_plan',
  'conclude',
] as const;

/** Applies a lead action and says what happened (sent back to the model as the tool result). */
export type ApplyLeadAction = (action: LeadAction) => string;

/** The lead's coordination tools, each applying one {@link LeadAction}. */
export function coordinationTools(apply: ApplyLeadAction, listTasks: () => string): ToolDefinition[] {
  const tools: ToolDefinition[] = [
    defineTool({
      name: 'spawn_worker', description: 'Start a worker by name: a stopped worker of the pool again, or a standby worker for the first time.',
      parameters: z.object({ worker: z.string() }),
      execute: ({ worker }) => apply({ type: 'spawn', worker }),
    }),
    defineTool({
      name: 'shutdown_worker', description: 'Shut a worker down: it finishes its current task, then stops (spawn_worker starts it again).',
      parameters: z.object({ worker: z.string(), reason: z.string().optional() }),
      execute: ({ worker, reason }) => apply({ type: 'shutdown', worker, ...defined({ reason }) }),
    }),
    defineTool({
      name: 'send_message', description: 'Send a message to a worker; it answers the worker\'s open question when there is one.',
      parameters: z.object({ to: z.string(), text: z.string() }),
      execute: ({ to, text }) => apply({ type: 'message', to, text }),
    }),
    defineTool({ name: 'list_tasks', description: 'List every task with its status and assignee.', parameters: z.object({}), execute: () => listTasks() }),
    defineTool({
      name: 'add_task', description: 'Add a task discovered along the way.',
      parameters: taskInputSchema,
      execute: (task) => apply({ type: 'add', task: clean(task) }),
    }),
    defineTool({
      name: 'split_task', description: 'Replace a task by several smaller ones (a worker on it is told to stop; the parts go back to the list).',
      parameters: z.object({ taskId: z.string(), parts: z.array(taskInputSchema).min(1) }),
      execute: ({ taskId, parts }) => apply({ type: 'split', taskId, parts: parts.map(clean) }),
    }),
    defineTool({
      name: 'cancel_task', description: 'Cancel a task that is no longer needed.',
      parameters: z.object({ taskId: z.string(), reason: z.string().optional() }),
      execute: ({ taskId, reason }) => apply({ type: 'cancel', taskId, ...defined({ reason }) }),
    }),
    defineTool({
      name: 'reassign_task', description: 'Take a task from its worker and give it to another (or back to the list).',
      parameters: z.object({ taskId: z.string(), to: z.string().optional() }),
      execute: ({ taskId, to }) => apply({ type: 'reassign', taskId, ...defined({ to }) }),
    }),
    defineTool({
      name: 'review_plan', description: 'Approve or reject a worker\'s plan, with feedback when rejecting.',
      parameters: z.object({ taskId: z.string(), approved: z.boolean(), feedback: z.string().optional() }),
      execute: ({ taskId, approved, feedback }) => apply({ type: 'review', taskId, approved, ...defined({ feedback }) }),
    }),
    defineTool({
      name: 'conclude', description: 'Write the final synthesis: what was done, what failed, what needs a person.',
      parameters: z.object({ summary: z.string() }),
      execute: ({ summary }) => apply({ type: 'conclude', summary }),
    }),
  ];
  return tools;
}

/** The text form of the lead's protocol, for adapters without tools. */
export const LEAD_TEXT_PROTOCOL = [
  'Act with lines of their own (any other text is ignored):',
  'APPROVE <taskId>            approve a plan',
  'REJECT <taskId>: <feedback> reject a plan',
  'ANSWER <worker>: <text>     answer a question (MESSAGE <worker>: <text> sends any message)',
  'ADD_TASK: {"title": "...", "description": "...", "dependsOn": ["t1"], "files": ["src/x.ts"]}',
  'SPLIT <taskId>: [{"title": "..."}, {"title": "..."}]',
  'CANCEL <taskId>: <reason>',
  'REASSIGN <taskId> [<worker>]',
  'SPAWN <worker>',
  'SHUTDOWN <worker>[: <reason>]',
].join('\n');

/** The result of {@link parseLeadActions}. */
export interface ParsedLeadActions {
  actions: LeadAction[];
  /** Lines that looked like actions but could not be read. */
  issues: string[];
}

const VERBS = new Set(['APPROVE', 'REJECT', 'ANSWER', 'MESSAGE', 'ADD_TASK', 'SPLIT', 'CANCEL', 'REASSIGN', 'SPAWN', 'SHUTDOWN']);

const isWordChar = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const isBlank = (c: number): boolean => c === 0x20 || c === 0x09;
/** Not white space, not a colon, not past the end (NaN). */
const isWordOfLine = (c: number): boolean => c === c && c !== 0x3a && !isWhiteSpace(c);

/**
 * One action line: `VERB [target] [extra] [: rest]`, the verb a whole word
 * in capitals, nothing else on the line. One pass, no backtracking.
 */
function readActionLine(raw: string): { verb: string; target: string; extra?: string; rest?: string } | undefined {
  const line = raw.trimStart();
  let i = 0;
  while (isWordChar(line.charCodeAt(i))) i++;
  if (i < 3 || i > 8) return undefined; // no verb is shorter or longer
  const verb = line.slice(0, i);
  if (!VERBS.has(verb)) return undefined;
  i = skipBlanks(line, i);
  const targetEnd = wordEnd(line, i);
  const target = line.slice(i, targetEnd);
  i = skipBlanks(line, targetEnd);
  const extraEnd = wordEnd(line, i);
  const extra = line.slice(i, extraEnd);
  i = skipBlanks(line, extraEnd);
  if (i === line.length) return extra === '' ? { verb, target } : { verb, target, extra };
  if (line.charCodeAt(i) !== 0x3a) return undefined;
  const rest = line.slice(i + 1);
  return extra === '' ? { verb, target, rest } : { verb, target, extra, rest };
}

function skipBlanks(line: string, i: number): number {
  while (isBlank(line.charCodeAt(i))) i++;
  return i;
}

function wordEnd(line: string, i: number): number {
  while (isWordOfLine(line.charCodeAt(i))) i++;
  return i;
}

/**
 * Read the lead's text-form actions, one a line (`LEAD_TEXT_PROTOCOL`).
 * Lines inside fenced code blocks are quoted examples and never act. Lines
 * that look like actions but cannot be read are reported in `issues`.
 * Linear; line ends (`\n`, `\r\n`, `\r`) and a BOM read the same; a
 * non-string throws a `ConfigurationError` (`invalid_argument`).
 */
export function parseLeadActions(text: string): ParsedLeadActions {
  const actions: LeadAction[] = [];
  const issues: string[] = [];
  const source = readableText(text, 'the text of parseLeadActions');
  scanSpans(source, (start, end, kind) => {
    if (kind !== 'text') return;
    let at = start;
    while (at < end && isWhiteSpace(source.charCodeAt(at))) at++;
    const c = source.charCodeAt(at);
    if (c < 0x41 || c > 0x5a) return; // every verb starts with a capital
    const raw = source.slice(start, end);
    const m = readActionLine(raw);
    if (!m) return;
    const action = toAction(m);
    if (typeof action === 'string') issues.push(`${action}: ${raw.trim().slice(0, 200)}`);
    else actions.push(action);
  });
  return { actions, issues };
}

/** The action of a read line, or why it cannot be one. */
function toAction({ verb, target, extra, rest }: { verb: string; target: string; extra?: string; rest?: string }): LeadAction | string {
  const body = (rest ?? '').trim();
  switch (verb) {
    case 'APPROVE': {
      if (target === '') return 'APPROVE needs a task id';
      const review: LeadAction = { type: 'review', taskId: target, approved: true };
      if (body) review.feedback = body;
      return review;
    }
    case 'REJECT':
      return target === '' ? 'REJECT needs a task id' : { type: 'review', taskId: target, approved: false, feedback: body || 'Rejected without feedback.' };
    case 'ANSWER':
    case 'MESSAGE':
      return target === '' || body === '' ? `${verb} needs a worker and a text` : { type: 'message', to: target, text: body };
    case 'ADD_TASK': {
      const task = readJson(body, taskInputSchema);
      return task === undefined ? 'ADD_TASK needs a task as JSON' : { type: 'add', task: clean(task) };
    }
    case 'SPLIT': {
      const parts = readJson(body, z.array(taskInputSchema).min(1));
      return target === '' || parts === undefined ? 'SPLIT needs a task id and a JSON list of tasks' : { type: 'split', taskId: target, parts: parts.map(clean) };
    }
    case 'CANCEL': {
      if (target === '') return 'CANCEL needs a task id';
      const cancel: LeadAction = { type: 'cancel', taskId: target };
      if (body) cancel.reason = body;
      return cancel;
    }
    case 'REASSIGN': {
      if (target === '') return 'REASSIGN needs a task id';
      const reassign: LeadAction = { type: 'reassign', taskId: target };
      if (extra) reassign.to = extra;
      return reassign;
    }
    case 'SHUTDOWN': {
      if (target === '') return 'SHUTDOWN needs a worker';
      const shutdown: LeadAction = { type: 'shutdown', worker: target };
      if (body) shutdown.reason = body;
      return shutdown;
    }
    default:
      return target === '' ? 'SPAWN needs a worker' : { type: 'spawn', worker: target };
  }
}

/** The worker's tool to ask the lead a question and wait for the answer. */
export function askLeadTool(ask: (question: string, signal: AbortSignal) => Promise<string>): ToolDefinition {
  return defineTool({
    name: 'ask_lead',
    description: 'Ask the lead a question and wait for the answer.',
    parameters: z.object({ question: z.string().min(1) }),
    execute: ({ question }, { signal }) => ask(question, signal),
  });
}

/**
 * The question of a worker's reply in the text form: the first line outside
 * fenced code blocks that starts with `QUESTION:` and has a question after
 * it. Linear; a non-string throws a `ConfigurationError` (`invalid_argument`).
 */
export function parseQuestion(text: string): string | undefined {
  let question: string | undefined;
  const source = readableText(text, 'the text of parseQuestion');
  scanSpans(source, (start, end, kind) => {
    if (question !== undefined || kind !== 'text') return;
    let at = start;
    while (at < end && isWhiteSpace(source.charCodeAt(at))) at++;
    if (!source.startsWith('QUESTION:', at)) return;
    const asked = source.slice(at + 'QUESTION:'.length, end).trim();
    if (asked !== '') question = asked;
  });
  return question;
}

function readJson<S extends z.ZodType>(text: string, schema: S): z.output<S> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function clean(task: z.output<typeof taskInputSchema>): TaskInput {
  return Object.fromEntries(Object.entries(task).filter(([, v]) => v !== undefined)) as unknown as TaskInput;
}
