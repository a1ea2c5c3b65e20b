/**
 * Plan templates on the command line: `troupe run --template <name | file>
 * --set key=value`, `troupe validate <template file>`, and `troupe
 * template list|save|show` over the template registry of a file store.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { realClock } from '../core/clock.js';
import { ConfigurationError } from '../core/errors.js';
import type { TroupeEvent } from '../core/events.js';
import { defined } from '../core/defined.js';
import { fileStore } from '../persistence/file-store.js';
import { executePlan, type PlanOutcome } from '../plan/engine/execute.js';
import { learnFromStats } from '../plan/learning/learning.js';
import { loadOutcomeStats } from '../plan/learning/outcome-stats.js';
import { recordRunOutcomes } from '../plan/learning/outcome-collector.js';
import { checkPlanTemplate, instantiatePlanTemplate, parsePlanTemplateText, type PlanTemplate, type TemplateValue } from '../plan/templates/template.js';
import { templateRegistry } from '../plan/templates/registry.js';
import { adapterLine, cliAdapterName, createCliAdapter } from './adapters.js';
import type { CliIo } from './io.js';
import { liveProgress, plainProgress, type Progress } from './progress.js';

/** The help texts of the template commands. */
export const TEMPLATE_HELP = {
  run: `Usage: troupe run --template <name | file> [--set <key>=<value> ...] [--adapter <name>] [--script <file.json>] [--store <dir>] [--learn] [--json] [--quiet]

Fill a plan template in and execute the plan. <name> is a template saved in
the store's template registry (\`troupe template save\`); a path to a YAML or
JSON file is read directly. Each --set gives one parameter (numbers and
booleans are read as such); the values, then the plan they give, are
checked before anything runs. With --store the run is logged there and its
outcomes are added to the statistics that \`troupe stats\` shows.

  --set <key>=<value>   a parameter's value (repeat for each)
  --learn               use the store's statistics of earlier runs: each role's
                        usual duration as its scheduling estimate (needs --store)
  --adapter, --script, --store, --json, --quiet: as for \`troupe run\``,
  template: `Usage:
  troupe template list [--store <dir>]            the templates in the store's registry
  troupe template save <file> [--store <dir>]     check a template file and save it in the registry
  troupe template show <name> [--store <dir>]     print a saved template as JSON

The store is --store <dir>, else $TROUPE_STORE. \`troupe validate <file>\`
checks a template file without saving it.`,
};

/** The flags the template commands read. */
export interface TemplateFlags {
  template?: string | undefined;
  set?: string[] | undefined;
  adapter?: string | undefined;
  script?: string | undefined;
  store?: string | undefined;
  json?: boolean | undefined;
  quiet?: boolean | undefined;
  learn?: boolean | undefined;
  help?: boolean | undefined;
}

const storeDirOf = (values: TemplateFlags, io: CliIo): string | undefined => values.store ?? (io.env.TROUPE_STORE || undefined);

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}

/** `--set key=value` flags as values by name; a flag without `=` is a usage error. */
export function parseSetFlags(flags: readonly string[]): Record<string, TemplateValue> {
  const values: Record<string, TemplateValue> = {};
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    if (eq <= 0) throw new ConfigurationError(`Expected --set <key>=<value>, got "${flag}"`, { code: 'invalid_argument' });
    values[flag.slice(0, eq).trim()] = flag.slice(eq + 1);
  }
  return values;
}

/** The template `source` names: a file, else a template in the store's registry. */
async function findTemplate(source: string, values: TemplateFlags, io: CliIo): Promise<unknown> {
  if (await isFile(source)) return parsePlanTemplateText(await readFile(source, 'utf8'), source);
  const dir = storeDirOf(values, io);
  if (dir === undefined) throw new ConfigurationError(`"${source}" is not a file; to use a saved template, give --store <dir> (or set TROUPE_STORE)`, { code: 'invalid_argument' });
  const found = await templateRegistry(fileStore(dir)).get(source, defined({ signal: io.signal }));
  if (!found) throw new ConfigurationError(`No template "${source}" in ${dir} (\`troupe template list --store ${dir}\` lists them)`, { code: 'invalid_argument' });
  return found;
}

/** `troupe run --template`. */
export async function templateRunCommand(rest: readonly string[], values: TemplateFlags, io: CliIo): Promise<number> {
  if (values.help) {
    io.out(TEMPLATE_HELP.run);
    return 0;
  }
  if (rest.length > 0) {
    io.err(`Expected no arguments besides --template and its flags, got ${rest.length}.\n\n${TEMPLATE_HELP.run}`);
    return 2;
  }
  const dir = storeDirOf(values, io);
  if (values.learn && dir === undefined) {
    io.err('--learn reads the statistics of earlier runs from a store: give --store <dir> (or set TROUPE_STORE).');
    return 2;
  }
  const { plan } = instantiatePlanTemplate(await findTemplate(values.template!, values, io), parseSetFlags(values.set ?? []));
  const store = dir === undefined ? undefined : fileStore(dir);
  const learning = values.learn && store ? learnFromStats(await loadOutcomeStats({ store, ...defined({ signal: io.signal }) }), { estimates: true }) : undefined;
  if (!values.quiet) io.err(adapterLine('troupe', values.adapter, io.env, values.script));
  const adapter = await createCliAdapter(cliAdapterName(values.adapter, io.env), { defs: [], env: io.env, ...defined({ script: values.script, clock: io.clock }) });
  let progress: Progress | undefined;
  let onEvent: ((event: TroupeEvent) => void) | undefined;
  if (values.json) onEvent = (event) => io.out(JSON.stringify(event));
  else if (!values.quiet) {
    progress = io.progress?.isTTY ? await liveProgress(io.progress, io.clock ?? realClock) : plainProgress(io.err);
    onEvent = progress.onEvent;
  }
  const runId = randomUUID();
  let outcome;
  try {
    outcome = await executePlan(plan, { adapter, runId, ...defined({ onEvent, signal: io.signal, clock: io.clock, store, learning }) });
  } finally {
    progress?.close();
  }
  if (store) await recordRunOutcomes(runId, { store, ...defined({ signal: io.signal }) });
  if (values.json) return outcome.stats.failed > 0 ? 1 : 0;
  printPlanOutcome(outcome, io);
  if (learning) io.out(`learned estimates: ${Object.entries(learning.estimates).map(([role, ms]) => `${role} ${ms} ms`).join(', ') || 'none yet'}`);
  if (dir !== undefined) io.out(`run: ${runId} (logged in ${dir}; \`troupe stats --store ${dir}\` shows the statistics)`);
  return outcome.stats.failed > 0 ? 1 : 0;
}

/** A plan's outcome on standard output: one line per chunk, the answer, and the counts. */
export function printPlanOutcome(outcome: Pick<PlanOutcome, 'results' | 'output' | 'stats' | 'status' | 'reason'>, io: CliIo): void {
  for (const r of outcome.results) io.out(`${r.sequenceIndex}. ${r.title} (${r.role}): ${r.status}${r.error ? ` - ${r.error}` : ''}`);
  io.out('');
  io.out(outcome.output);
  io.out('');
  const s = outcome.stats;
  io.out(`plan: ${s.completed}/${s.total} completed, ${s.failed} failed, ${s.skipped} skipped   status: ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ''}`);
}

/** `troupe validate <template file>`: check a template's structure. */
export async function templateValidateCommand(file: string, io: CliIo): Promise<number> {
  const check = checkPlanTemplate(parsePlanTemplateText(await readFile(file, 'utf8'), file));
  for (const w of check.warnings) io.out(`warning  ${w.path}: ${w.message}`);
  if (!check.valid) for (const e of check.errors) io.err(`error    ${e.path}: ${e.message}`);
  const errors = check.valid ? 0 : check.errors.length;
  const what = check.valid ? `template ${check.template.name}: ${Object.keys(check.template.parameters).length} parameters, ${check.template.chunks.length} chunks, ` : 'template: ';
  io.out(`${what}${errors} error${errors === 1 ? '' : 's'}, ${check.warnings.length} warning${check.warnings.length === 1 ? '' : 's'}`);
  return errors > 0 ? 1 : 0;
}

/** True when `path` is a file (what `troupe validate` checks as a template rather than an agent folder). */
export const isTemplateFile = isFile;

/** `troupe template list|save|show`. */
export async function templateCommand(rest: readonly string[], values: TemplateFlags, io: CliIo): Promise<number> {
  const [sub, arg, ...extra] = rest;
  if (values.help || sub === undefined) {
    (values.help ? io.out : io.err)(TEMPLATE_HELP.template);
    return values.help ? 0 : 2;
  }
  const needs = sub === 'list' ? 0 : 1;
  if (!['list', 'save', 'show'].includes(sub) || (arg === undefined ? 0 : 1 + extra.length) !== needs) {
    io.err(`Expected \`troupe template list\`, \`save <file>\` or \`show <name>\`, got "${rest.join(' ')}".\n\n${TEMPLATE_HELP.template}`);
    return 2;
  }
  const dir = storeDirOf(values, io);
  if (dir === undefined) {
    io.err('The template registry is in a store: give --store <dir> (or set TROUPE_STORE).');
    return 2;
  }
  const registry = templateRegistry(fileStore(dir));
  const call = defined({ signal: io.signal });
  if (sub === 'list') {
    const names = await registry.list(call);
    for (const name of names) {
      const t = (await registry.get(name, call)) as PlanTemplate;
      io.out(`${name.padEnd(24)} ${Object.keys(t.parameters).join(', ') || '(no parameters)'}${t.description ? `   ${t.description}` : ''}`);
    }
    if (names.length === 0) io.out(`No templates in ${dir}.`);
    return 0;
  }
  if (sub === 'save') {
    const saved = await registry.save(parsePlanTemplateText(await readFile(arg!, 'utf8'), arg), call);
    io.out(`saved template ${saved.name} in ${dir}`);
    return 0;
  }
  const found = await registry.get(arg!, call);
  if (!found) {
    io.err(`No template "${arg}" in ${dir}.`);
    return 1;
  }
  io.out(JSON.stringify(found, null, 2));
  return 0;
}
