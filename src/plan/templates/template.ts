/**
 * Plan templates: a plan with declared, typed parameters that appear as
 * `{{name}}` in its summary, chunk titles, prompts and working-scope paths.
 * Checking a template ({@link checkPlanTemplate}) looks at its structure;
 * instantiating it ({@link instantiatePlanTemplate}) checks the values, then
 * the plan that results, before anything runs.
 * @module
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigurationError, describeValue, errorMessage } from '../../core/errors.js';
import { readableText } from '../../text/lines.js';
import { planChunkSchema, planSchema, validatePlan, type Plan } from '../model/plan.js';

/** The types a template parameter may have. */
export const templateParameterTypes = ['string', 'number', 'integer', 'boolean'] as const;

/** A template parameter's type. */
export type TemplateParameterType = (typeof templateParameterTypes)[number];

/** A parameter value. */
export type TemplateValue = string | number | boolean;

const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const TEMPLATE_NAME = /^[a-z0-9][a-z0-9-]{0,99}$/;

const parameterSchema = z.strictObject({
  type: z.enum(templateParameterTypes),
  description: z.string().optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  /** The only values allowed. */
  enum: z.array(z.union([z.string(), z.number()])).min(1).optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  /** Longest string value. */
  maxLength: z.number().int().positive().optional(),
});

/** The zod schema of a plan template (see {@link PlanTemplate}). */
export const planTemplateSchema = z.object({
  name: z.string().regex(TEMPLATE_NAME, 'must be lower-case letters, digits and "-" (at most 100), starting with a letter or digit'),
  description: z.string().optional(),
  parameters: z
    .record(z.string().regex(PARAMETER_NAME, 'a parameter name is a letter or "_" followed by letters, digits and "_" (at most 64)'), parameterSchema)
    .default({}),
  planSummary: z.string(),
  // Prompts are checked for length once their parameters are filled in.
  chunks: z.array(planChunkSchema.extend({ prompt: z.string().min(1) })),
});

/** A declared parameter of a {@link PlanTemplate}. */
export type TemplateParameter = z.infer<typeof parameterSchema>;

/**
 * A plan with declared parameters: the fields of a {@link Plan}, a `name`
 * (its key in a template registry), and `parameters` by name. `{{name}}`
 * (spaces inside the braces allowed) in `planSummary` and in a chunk's
 * `title`, `prompt` and `workingScope` entries is replaced by the value;
 * any other `{{` is text.
 */
export type PlanTemplate = z.infer<typeof planTemplateSchema>;

/** One problem of a template or of its values. */
export interface TemplateIssue {
  /** Where: `parameters.module`, `chunks.2.prompt`, `values.retries`, `plan`... */
  path: string;
  /** Which rule failed. */
  code: 'schema' | 'unknown_parameter' | 'unused_parameter' | 'bad_default' | 'missing_value' | 'bad_value' | 'undeclared_value' | 'invalid_plan' | 'unsafe_path' | 'too_large';
  message: string;
}

/** A template or its values are invalid; `issues` lists every problem. */
export class TemplateError extends ConfigurationError {
  /** Every problem found. */
  readonly issues: TemplateIssue[];
  constructor(message: string, code: 'invalid_template' | 'invalid_template_values', issues: TemplateIssue[]) {
    super(message, { code, details: { issues } });
    this.issues = issues;
  }
}

/** What {@link checkPlanTemplate} returns: the parsed template when it is sound, errors that make it unusable, and warnings. */
export type TemplateCheck =
  | { valid: true; template: PlanTemplate; warnings: TemplateIssue[] }
  | { valid: false; errors: TemplateIssue[]; warnings: TemplateIssue[] };

/** A `{{name}}` found in a text: the name and where it starts and ends. */
export interface TemplatePlaceholder {
  name: string;
  start: number;
  end: number;
}

const isSpace = (c: number): boolean => c === 32 || c === 9;
const isNameChar = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/**
 * The placeholders of `text`, in order: `{{`, optional spaces, a name
 * (letters, digits, `_`, not starting with a digit), optional spaces, `}}`.
 * One pass over the text: a span that fails to be a placeholder holds no
 * `{`, so no character is read more than twice.
 *
 * @example
 * ```ts
 * scanPlaceholders('Fix {{ module }} in {{dir}}'); // [{ name: 'module', start: 4, end: 16 }, { name: 'dir', ... }]
 * ```
 */
export function scanPlaceholders(text: string): TemplatePlaceholder[] {
  const found: TemplatePlaceholder[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf('{{', from);
    if (open < 0) return found;
    let i = open + 2;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    const nameStart = i;
    while (i < text.length && isNameChar(text.charCodeAt(i))) i++;
    const name = text.slice(nameStart, i);
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (name !== '' && !(name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57) && text.startsWith('}}', i)) {
      found.push({ name, start: open, end: i + 2 });
      from = i + 2;
    } else {
      from = open + 1;
    }
  }
}

/** `text` with every placeholder replaced by `value(name)`, in one pass (values are not scanned again). */
export function fillPlaceholders(text: string, value: (name: string) => string): string {
  let out = '';
  let at = 0;
  for (const p of scanPlaceholders(text)) {
    out += text.slice(at, p.start) + value(p.name);
    at = p.end;
  }
  return at === 0 ? text : out + text.slice(at);
}

/** The texts of a template where placeholders count, with their paths. */
function templateTexts(t: PlanTemplate): Array<{ path: string; text: string; kind: 'text' | 'path' }> {
  const texts: Array<{ path: string; text: string; kind: 'text' | 'path' }> = [{ path: 'planSummary', text: t.planSummary, kind: 'text' }];
  t.chunks.forEach((c, i) => {
    texts.push({ path: `chunks.${i}.title`, text: c.title, kind: 'text' }, { path: `chunks.${i}.prompt`, text: c.prompt, kind: 'text' });
    c.workingScope?.forEach((s, j) => texts.push({ path: `chunks.${i}.workingScope.${j}`, text: s, kind: 'path' }));
  });
  return texts;
}

/**
 * Check a template's structure without values: the schema, every
 * placeholder names a declared parameter, every default fits its
 * parameter, and the chunks form a valid graph (indexes unique,
 * dependencies known, no cycle). A declared parameter no text uses is a
 * warning. Accepts a parsed document or a template.
 *
 * @example
 * ```ts
 * const check = checkPlanTemplate(parseYaml(text));
 * if (!check.valid) for (const e of check.errors) console.error(`${e.path}: ${e.message}`);
 * ```
 */
export function checkPlanTemplate(value: unknown): TemplateCheck {
  const parsed = planTemplateSchema.safeParse(value);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((i): TemplateIssue => ({ path: i.path.join('.') || '(root)', code: 'schema', message: i.message }));
    return { valid: false, errors, warnings: [] };
  }
  const t = parsed.data;
  const errors: TemplateIssue[] = [];
  const warnings: TemplateIssue[] = [];
  const used = new Set<string>();
  for (const { path, text } of templateTexts(t)) {
    for (const p of scanPlaceholders(text)) {
      used.add(p.name);
      if (!Object.hasOwn(t.parameters, p.name)) errors.push({ path, code: 'unknown_parameter', message: `{{${p.name}}} names no declared parameter` });
    }
  }
  for (const [name, param] of Object.entries(t.parameters)) {
    if (!used.has(name)) warnings.push({ path: `parameters.${name}`, code: 'unused_parameter', message: `parameter "${name}" is declared but no text uses it` });
    if (param.enum && param.type === 'boolean') errors.push({ path: `parameters.${name}.enum`, code: 'schema', message: 'a boolean parameter takes no enum' });
    if (param.default !== undefined) {
      const problem = checkValue(param, param.default);
      if (problem) errors.push({ path: `parameters.${name}.default`, code: 'bad_default', message: problem });
    }
  }
  const graph = validatePlan({ planSummary: t.planSummary, chunks: t.chunks });
  for (const message of graph.errors) errors.push({ path: 'chunks', code: 'invalid_plan', message });
  return errors.length === 0 ? { valid: true, template: t, warnings } : { valid: false, errors, warnings };
}

/** Why `value` does not fit `param`, or undefined when it does. */
function checkValue(param: TemplateParameter, value: unknown): string | undefined {
  switch (param.type) {
    case 'boolean':
      if (typeof value !== 'boolean') return `expected a boolean, got ${describeValue(value)}`;
      return undefined;
    case 'string':
      if (typeof value !== 'string') return `expected a string, got ${describeValue(value)}`;
      if (param.maxLength !== undefined && value.length > param.maxLength) return `expected at most ${param.maxLength} characters, got ${value.length}`;
      break;
    case 'number':
    case 'integer':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `expected a finite number, got ${describeValue(value)}`;
      if (param.type === 'integer' && !Number.isInteger(value)) return `expected an integer, got ${value}`;
      if (param.minimum !== undefined && value < param.minimum) return `expected at least ${param.minimum}, got ${value}`;
      if (param.maximum !== undefined && value > param.maximum) return `expected at most ${param.maximum}, got ${value}`;
      break;
  }
  if (param.enum && !param.enum.includes(value as string | number)) return `expected one of ${param.enum.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(value)}`;
  return undefined;
}

/** An integer written in decimal: digits, with an optional leading minus. */
const INTEGER_TEXT = /^-?\d+$/;
/** A number written in decimal: an integer or a fraction, with an optional exponent. */
const NUMBER_TEXT = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A value given as text (`--set retries=2`) as its parameter's type; other
 * values pass unchanged. Only plain decimal text converts: an integer is
 * digits (`"3"`, `"-3"`), a number is also a fraction or an exponent
 * (`"2.5"`, `"1e3"`); `"0x3"`, `" 3 "`, `"+3"` and, for an integer, `"3e0"`
 * stay text and are refused as not of the parameter's type. A boolean is
 * `"true"` or `"false"`.
 */
function coerce(param: TemplateParameter, value: TemplateValue): TemplateValue {
  if (typeof value !== 'string' || param.type === 'string') return value;
  if (param.type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return (param.type === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(value) ? Number(value) : value;
}

/** Most characters of text a template may fill in (titles, prompts, working scopes and the summary, together). */
export const MAX_TEMPLATE_PLAN_CHARS = 1_000_000;

/** Whether a working-scope path escapes the workspace: absolute, a drive, or with a `..` segment. */
function unsafePath(path: string): boolean {
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path)) return true;
  return path.split(/[\\/]/).some((segment) => segment === '..');
}

/**
 * Fill placeholders in with `values`, counting the text as it grows: a
 * template cannot make a plan larger than {@link MAX_TEMPLATE_PLAN_CHARS}
 * (`too_large`), and the count stops it before the text is built.
 */
function boundedFill(template: string, values: Readonly<Record<string, TemplateValue>>): (text: string) => string {
  let size = 0;
  const grow = (chars: number) => {
    size += chars;
    if (size > MAX_TEMPLATE_PLAN_CHARS) {
      const issue: TemplateIssue = { path: 'plan', code: 'too_large', message: `the filled-in plan would pass ${MAX_TEMPLATE_PLAN_CHARS} characters of text` };
      throw new TemplateError(`Plan template "${template}" gives a plan too large with these values: ${issue.message}`, 'invalid_template_values', [issue]);
    }
  };
  return (text) => {
    grow(text.length);
    return fillPlaceholders(text, (name) => {
      const value = String(values[name]);
      grow(value.length);
      return value;
    });
  };
}

/** What {@link instantiatePlanTemplate} returns. */
export interface InstantiatedTemplate {
  /** The plan, validated. */
  plan: Plan;
  /** Every parameter's value, defaults included. */
  values: Record<string, TemplateValue>;
}

/**
 * Fill a template in: check its structure ({@link checkPlanTemplate}: a
 * `TemplateError` with code `invalid_template`), then the values (every
 * required parameter given, each of its type and range, none undeclared:
 * `invalid_template_values`; text is converted to numbers and booleans, so
 * `--set` values work), then the plan that results (the plan schema, the
 * dependency graph, and working-scope paths that stay relative and never
 * climb with `..`: `invalid_template`).
 *
 * @example
 * ```ts
 * const { plan } = instantiatePlanTemplate(template, { module: 'cache', retries: 2 });
 * await executePlan(plan, { adapter });
 * ```
 */
export function instantiatePlanTemplate(template: unknown, values: Readonly<Record<string, TemplateValue>> = {}): InstantiatedTemplate {
  const check = checkPlanTemplate(template);
  if (!check.valid) throw new TemplateError(`Invalid plan template: ${formatTemplateIssues(check.errors)}`, 'invalid_template', check.errors);
  const t = check.template;
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new ConfigurationError(`Expected template values to be an object, got ${describeValue(values)}`, { code: 'invalid_argument' });
  }
  const issues: TemplateIssue[] = [];
  const filled: Record<string, TemplateValue> = {};
  for (const name of Object.keys(values)) {
    if (!Object.hasOwn(t.parameters, name)) issues.push({ path: `values.${name}`, code: 'undeclared_value', message: `template "${t.name}" declares no parameter "${name}" (it has: ${Object.keys(t.parameters).join(', ') || 'none'})` });
  }
  for (const [name, param] of Object.entries(t.parameters)) {
    const given = Object.hasOwn(values, name) ? values[name] : undefined;
    if (given === undefined) {
      if (param.default === undefined) issues.push({ path: `values.${name}`, code: 'missing_value', message: `parameter "${name}" (${param.type}) needs a value` });
      else filled[name] = param.default;
      continue;
    }
    const value = coerce(param, given);
    const problem = checkValue(param, value);
    if (problem) issues.push({ path: `values.${name}`, code: 'bad_value', message: `parameter "${name}": ${problem}` });
    else filled[name] = value;
  }
  if (issues.length > 0) throw new TemplateError(`Invalid values for plan template "${t.name}": ${formatTemplateIssues(issues)}`, 'invalid_template_values', issues);

  const fill = boundedFill(t.name, filled);
  const raw = {
    planSummary: fill(t.planSummary),
    chunks: t.chunks.map((c) => ({ ...c, title: fill(c.title), prompt: fill(c.prompt), ...(c.workingScope ? { workingScope: c.workingScope.map(fill) } : {}) })),
  };
  const problems: TemplateIssue[] = [];
  raw.chunks.forEach((c, i) =>
    c.workingScope?.forEach((s, j) => {
      if (unsafePath(s)) problems.push({ path: `chunks.${i}.workingScope.${j}`, code: 'unsafe_path', message: `path ${JSON.stringify(s)} leaves the workspace` });
    }),
  );
  const parsed = planSchema.safeParse(raw);
  if (!parsed.success) {
    for (const i of parsed.error.issues) problems.push({ path: i.path.join('.') || 'plan', code: 'invalid_plan', message: i.message });
  } else {
    for (const message of validatePlan(parsed.data).errors) problems.push({ path: 'plan', code: 'invalid_plan', message });
  }
  if (problems.length > 0 || !parsed.success) {
    throw new TemplateError(`Plan template "${t.name}" gives an invalid plan with these values: ${formatTemplateIssues(problems)}`, 'invalid_template', problems);
  }
  return { plan: parsed.data, values: filled };
}

/**
 * Read a template file's text (YAML or JSON, parsed as data only). A text
 * that is neither is a `TemplateError` (`invalid_template`); the template
 * itself is checked by {@link checkPlanTemplate}.
 */
export function parsePlanTemplateText(text: string, source = 'the template'): unknown {
  const readable = readableText(text, source);
  try {
    return parseYaml(readable, { prettyErrors: false });
  } catch (error) {
    const issue: TemplateIssue = { path: '(root)', code: 'schema', message: `${source} is not YAML or JSON: ${errorMessage(error)}` };
    throw new TemplateError(issue.message, 'invalid_template', [issue]);
  }
}

/** Issues as one line: `path: message; ...`. */
export function formatTemplateIssues(issues: readonly TemplateIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ');
}
