/**
 * The decomposer: ask a planning session for a JSON plan, validate it, and
 * send invalid answers back with their errors, up to `maxAttempts` times.
 * @module
 */
import { z } from 'zod';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { safeFindJson } from '../../text/json.js';
import { defineOptions, listOf, oneOf, positiveInteger, string } from '../../core/options.js';
import { conversationShape, withConversation, type ConversationOptions } from './conversation.js';
import { PlanValidationError, chunkRoles, validatePlanJson, type ChunkRole, type Plan } from '../model/plan.js';
import { defaultRoles } from '../model/roles.js';

/** Options of {@link decompose}. */
export interface DecomposeOptions extends ConversationOptions {
  /** Roles the planner may assign. Default: every role. */
  roles?: readonly ChunkRole[];
  /** Answers tried before giving up. Default: 3. */
  maxAttempts?: number;
  /** Extra context for the planner (clarifications, a previous plan and report, feedback). */
  context?: string;
  /** The planner's system prompt. Default: the Planning role's. */
  system?: string;
}

/** The description {@link DecomposeOptions} are checked against. */
const decomposeOptions = defineOptions<DecomposeOptions>('decompose', {
  ...conversationShape,
  roles: listOf(oneOf(chunkRoles)),
  maxAttempts: positiveInteger,
  context: string,
  system: string,
});

/** What the planner answered when it may ask: a plan, or questions for the user. */
export type PlanOrQuestions = { plan: Plan; questions?: undefined } | { plan?: undefined; questions: string[] };

const clarifySchema = z.object({ action: z.literal('clarify'), questions: z.array(z.unknown()) });

/** The questions of a `{"action":"clarify","questions":[...]}` answer, when it is one with at least one question. */
export function readQuestions(text: string): string[] | undefined {
  const found = safeFindJson(text, { kind: 'object', schema: clarifySchema });
  if (!found.success) return undefined;
  const questions = found.data.data.questions.filter((q): q is string => typeof q === 'string' && q.trim() !== '');
  return questions.length > 0 ? questions : undefined;
}

/**
 * Turn a task into a validated {@link Plan}. Throws a
 * {@link PlanValidationError} carrying every attempt's errors when no answer
 * is valid.
 *
 * @example
 * ```ts
 * const plan = await decompose('Find the memory leaks in the cache and the session modules', { adapter });
 * ```
 */
export async function decompose(task: string, options: DecomposeOptions): Promise<Plan> {
  return (await planOrAsk(task, options, false)).plan!;
}

/**
 * {@link decompose}, where the planner may also answer with questions for
 * the user (`{"action":"clarify","questions":[...]}`) when `mayAsk` is true
 * (the planning session's way back to clarifying).
 */
export async function planOrAsk(task: string, options: DecomposeOptions, mayAsk: boolean): Promise<PlanOrQuestions> {
  const maxAttempts = decomposeOptions.check(options).maxAttempts ?? 3;
  if (typeof task !== 'string' || task.trim() === '') throw new ConfigurationError(`Expected \`task\` to be a non-empty string, got ${describeValue(task)}`);
  const roles = options.roles ?? chunkRoles;
  const { value } = await withConversation<PlanOrQuestions>('planner', options.system ?? defaultRoles.Planning.system, options, async (session, signal, ctx) => {
    const failures: string[][] = [];
    let message = planningPrompt(task, roles, options.context) + (mayAsk ? ASK_LINE : '');
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const { text } = await session.send(message, signal ? { signal } : {});
      const checked = validatePlanJson(text);
      if (!checked.plan && mayAsk) {
        const questions = readQuestions(text);
        if (questions) return { questions };
      }
      const errors = [...checked.errors];
      if (checked.plan) {
        for (const c of checked.plan.chunks) {
          if (!roles.includes(c.role)) errors.push(`chunk ${c.sequenceIndex} uses role ${c.role}, which is not available (use one of: ${roles.join(', ')})`);
        }
        if (errors.length === 0) {
          if (checked.repaired) ctx?.emit('warning', { message: 'The plan was damaged JSON (a trailing comma, single quotes, a cut-off end...) and was repaired', code: 'json_repaired' });
          return { plan: checked.plan };
        }
      }
      failures.push(errors);
      message = `Your plan is invalid:\n${errors.map((e) => `- ${e}`).join('\n')}\n\nAnswer again with the corrected plan as one JSON object, nothing else.`;
    }
    throw new PlanValidationError(`No valid plan after ${maxAttempts} attempts: ${failures.at(-1)!.join('; ')}`, failures);
  });
  return value;
}

const ASK_LINE = '\n- If you cannot plan without answers from the user, answer instead with {"action":"clarify","questions":["..."]}.';

/** The planning prompt (exported for custom decomposers). */
export function planningPrompt(task: string, roles: readonly ChunkRole[] = chunkRoles, context?: string): string {
  const roleLines = roles.map((r) => `- ${r}: ${describeRole(r)}`).join('\n');
  return `## Task

${task}
${context ? `\n## Context\n\n${context}\n` : ''}
## What to answer

Break the task into a plan and answer with one JSON object, nothing else:

{"planSummary": "...", "chunks": [{"sequenceIndex": 0, "title": "...", "prompt": "...", "dependsOnIndexes": [], "workingScope": ["src/..."], "requiredSkills": ["..."], "complexity": "Low" | "Medium" | "High", "role": "...", "estimatedMs": 120000}]}

- Make the chunks as small as possible and independent wherever you can: independent chunks run in parallel.
- Add a dependency only where a chunk needs another chunk's result; dependencies must not form a cycle.
- Each prompt (at least 10 characters) must be self-contained: a worker sees only its prompt and the results of its dependencies, so say what it needs from them.
- End with a Synthesis chunk that depends on the others when their results must be consolidated.
- \`estimatedMs\` (optional) is your rough guess of how long one worker needs for the chunk, in milliseconds: long chains start first.
- Roles:
${roleLines}`;
}

function describeRole(role: ChunkRole): string {
  const system = defaultRoles[role].system;
  const own = system.split('. ').slice(2).join('. ');
  return own || 'general work';
}
