/**
 * The headings of the prompts troupe writes, in one style: a section is a
 * `## ALL CAPS` line, and one agent's part of a section is a
 * `### From <name>` line (the advisors' `## ORIGINAL USER REQUEST` /
 * `## ANALYSIS GATHERED` / `### From <advisor>`). Every pattern takes its
 * headings from here, so the same part of a prompt reads the same
 * everywhere; a scripted test can match on them too.
 * @module
 */

/** Every section heading of the prompts troupe writes. */
export const PROMPT_HEADINGS = {
  /** The request the run started with (every pattern that passes it on). */
  request: '## ORIGINAL USER REQUEST',
  /** The advisors' answers, for the main runnable. */
  analysis: '## ANALYSIS GATHERED',
  /** The answers before this one (a sequence's earlier steps, a delegation's history). */
  earlierAnswers: '## EARLIER ANSWERS',
  /** The workers' results, for the lead's synthesis and the evaluator. */
  workerResults: '## WORKER RESULTS',
  /** The workers a lead may assign tasks to. */
  availableWorkers: '## AVAILABLE WORKERS',
  /** The application's guidance on who should do what. */
  routingContext: '## ROUTING CONTEXT',
  /** A worker's own task. */
  task: '## YOUR ASSIGNED TASK',
  /** What a loop works toward. */
  goal: '## GOAL',
  /** The answer of the previous iteration of a loop. */
  previousAnswer: '## YOUR PREVIOUS ANSWER',
  /** The evaluation of the previous iteration of a loop. */
  lastEvaluation: '## LAST EVALUATION',
  /** What the last evaluation calls for. */
  adjustments: '## ADJUSTMENTS',
  /** The answer an evaluator scores. */
  responseToEvaluate: '## RESPONSE TO EVALUATE',
  /** The hand-offs an agent may choose. */
  handoffs: '## HAND-OFFS',
  /** The receiver's instruction of a hand-off choice. */
  nextStep: '## NEXT STEP',
  /** What a classifier guardrail blocks. */
  policy: '## POLICY',
  /** A coordination's task list, for its lead. */
  tasks: '## TASKS',
  /** Messages of a coordination's bus, for its lead. */
  newMessages: '## NEW MESSAGES',
  /** A worker's earlier turns on its task. */
  earlierInTask: '## EARLIER IN THIS TASK',
  /** What a worker is told in this turn, after its earlier turns. */
  now: '## NOW',
} as const;

/** `## ITERATION <i>/<n>`: which iteration of a loop this is. */
export function iterationHeading(iteration: number, maxIterations: number): string {
  return `## ITERATION ${iteration}/${maxIterations}`;
}

/** `## HANDOFF FROM <name>`: the answer of the side that handed off. */
export function handoffHeading(from: string): string {
  return `## HANDOFF FROM ${from}`;
}

/** `## TEXT TO CHECK (<stage>)`: what a classifier guardrail judges. */
export function textToCheckHeading(stage: string): string {
  return `## TEXT TO CHECK (${stage})`;
}

/** `### From <name>` (with `(<note>)`, such as `failed`): one agent's part of a section. */
export function fromHeading(name: string, note?: string): string {
  return `### From ${name}${note === undefined ? '' : ` (${note})`}`;
}

/**
 * The request section: `## ORIGINAL USER REQUEST` and the request, or the
 * request as it is when it already opens with that section (a message one
 * pattern enriched and passed on to another: a hand-off's receiver that
 * consults advisors, a router's destination), so nested patterns never
 * write the heading twice.
 */
export function requestSection(request: string): string {
  return request.startsWith(`${PROMPT_HEADINGS.request}\n`) ? request : section(PROMPT_HEADINGS.request, request);
}

/** A heading and its body: `<heading>\n<body>`. */
export function section(heading: string, body: string): string {
  return `${heading}\n${body}`;
}
