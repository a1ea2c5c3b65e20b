/**
 * Guardrails that are agents: a classifier (usually an agent on a cheaper
 * model) reads the text and answers `VERDICT: allow` or `VERDICT: block`,
 * optionally with `REASON: ...`.
 * @module
 */
import { defined } from '../core/defined.js';
import type { Guardrail, GuardrailVerdict } from '../core/guardrails.js';
import { ConfigurationError, ParseError, describeValue } from '../core/errors.js';
import { defineOptions, nonEmptyString, oneOf, string } from '../core/options.js';
import type { ParseIssue, SafeParseResult } from '../core/parse-result.js';
import type { Runnable } from '../core/runnable.js';
import { scanSpans } from '../text/fences.js';
import { isWhiteSpace, readableText } from '../text/lines.js';
import { PROMPT_HEADINGS, section, textToCheckHeading } from '../text/headings.js';

/** A classifier's answer. */
export interface ClassifierVerdict {
  /** `block` trips the guardrail. */
  verdict: 'allow' | 'block';
  /** The `REASON:` line, when there is one. */
  reason?: string;
}

/** `value` without the quotes, backticks, stars and final period around it. */
function stripQuotes(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && '`"\'*'.includes(value[start]!)) start++;
  while (end > start && '`"\'*.'.includes(value[end - 1]!)) end--;
  return value.slice(start, end).trim();
}

/** Read `LABEL: value` lines outside fenced code; the first of each label wins. Linear. */
function labelledLines(text: string, labels: readonly string[]): Map<string, string> {
  const source = readableText(text, 'a classifier reply');
  const found = new Map<string, string>();
  scanSpans(source, (start, end, kind) => {
    if (kind !== 'text') return;
    let at = start;
    while (at < end && isWhiteSpace(source.charCodeAt(at))) at++;
    for (const label of labels) {
      if (found.has(label) || source.slice(at, at + label.length + 1).toUpperCase() !== `${label}:`) continue;
      found.set(label, source.slice(at + label.length + 1, end).trim());
    }
  });
  return found;
}

/**
 * Read a classifier's reply: the first `VERDICT:` line outside fenced code
 * (`allow` or `block`, any case, optionally in backticks or quotes) and the
 * first `REASON:` line. Linear in the text. Issues: `no_verdict`,
 * `unknown_verdict`.
 */
export function safeParseClassifierVerdict(text: string): SafeParseResult<ClassifierVerdict> {
  const lines = labelledLines(text, ['VERDICT', 'REASON']);
  const raw = lines.get('VERDICT');
  if (raw === undefined) return { success: false, issues: [{ code: 'no_verdict', message: 'The reply has no `VERDICT: allow|block` line' }] };
  const value = stripQuotes(raw).toLowerCase();
  if (value !== 'allow' && value !== 'block') {
    return { success: false, issues: [{ code: 'unknown_verdict', message: `Expected the verdict to be allow or block, got ${describeValue(raw)}` }] };
  }
  const reason = lines.get('REASON');
  return { success: true, data: { verdict: value, ...(reason ? { reason } : {}) } };
}

/** {@link safeParseClassifierVerdict}, throwing a `ParseError` with the issues in `details`. */
export function parseClassifierVerdict(text: string): ClassifierVerdict {
  const result = safeParseClassifierVerdict(text);
  if (result.success) return result.data;
  throw new ParseError(result.issues.map((i: ParseIssue) => i.message).join('; '), { details: { issues: result.issues } });
}

/** Options of {@link classifierGuardrail}. */
export interface ClassifierGuardrailOptions {
  /** The guardrail's name. Default: the classifier's name. */
  name?: string;
  /** What to block, told to the classifier before the text (its system prompt may say it instead). */
  policy?: string;
  /** A reply without a readable verdict: `trip` (fail closed) or `allow`. Default: `trip`. */
  unclear?: 'trip' | 'allow';
}

const classifierGuardrailOptions = defineOptions<ClassifierGuardrailOptions>('classifierGuardrail', { name: nonEmptyString, policy: string, unclear: oneOf(['trip', 'allow']) });

/** The classifier's prompt. */
export function classifierPrompt(text: string, stage: string, policy: string | undefined): string {
  const parts = [
    policy ? section(PROMPT_HEADINGS.policy, policy) : '',
    section(textToCheckHeading(stage), text),
    'Reply with one line `VERDICT: allow` or `VERDICT: block`, then a line `REASON: <why>`.',
  ];
  return parts.filter((p) => p !== '').join('\n\n');
}

/**
 * A guardrail that asks `classifier` (an agent, usually on a cheaper model)
 * whether to block the text. It runs in the guarded run, unguarded itself,
 * so its turns and usage are in the trace. `VERDICT: block` trips; a reply
 * without a verdict trips too unless `unclear: 'allow'`.
 *
 * @example
 * ```ts
 * const judge = agent({ name: 'topic-judge', model: 'small-model', system: 'You check that requests are about our product.' });
 * const guarded = withGuardrails(support, { input: [classifierGuardrail(judge)], parallelInput: true });
 * ```
 */
export function classifierGuardrail(classifier: Runnable, options: ClassifierGuardrailOptions = {}): Guardrail {
  if (!classifier || typeof classifier.run !== 'function') {
    throw new ConfigurationError(`Expected a runnable as the classifier, got ${describeValue(classifier)}`);
  }
  classifierGuardrailOptions.check(options);
  return {
    name: options.name ?? classifier.name,
    async check(text, { ctx, stage }): Promise<GuardrailVerdict> {
      const outcome = await classifier.run(classifierPrompt(text, stage, options.policy), ctx);
      const parsed = safeParseClassifierVerdict(outcome.output);
      if (!parsed.success) {
        const reason = `The classifier gave no verdict: ${parsed.issues[0]!.message}`;
        return { tripped: options.unclear !== 'allow', reason, info: { classifier: classifier.name, unclear: true } };
      }
      const { verdict, reason } = parsed.data;
      return { tripped: verdict === 'block', ...defined({ reason }), info: { classifier: classifier.name, verdict } };
    },
  };
}
