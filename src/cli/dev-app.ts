/**
 * The server of `troupe dev`: `troupe/http`'s run routes under `/api`, the
 * interface (`troupe/ui`) at `/`, and the routes the interface uses beyond
 * them — the folder's catalogue, a run's checkpoints, replay and fork.
 * What a run starts comes from the catalogue: the lead planning with
 * workers (a planning session, answered from the page), an agent or a
 * team, a plan template, or a squad preset. Only this machine is let in:
 * a request must name 127.0.0.1 or localhost as its host, and a request
 * from another page (its `Origin`) is refused.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { compileAgents } from '../agents/compile.js';
import type { ModelAdapter } from '../core/adapter.js';
import { defined } from '../core/defined.js';
import { ConfigurationError, errorMessage, isTroupeError } from '../core/errors.js';
import { resume } from '../core/resume.js';
import { startRun } from '../core/run.js';
import type { Runnable } from '../core/runnable.js';
import type { Store } from '../core/store.js';
import type { ToolDefinition } from '../core/tools.js';
import { cancellationSignal } from '../integrations/http/cancel.js';
import { errorResponse, jsonResponse, runHandler, type Handler, type Principal } from '../integrations/http/handler.js';
import { isSafeId } from '../integrations/http/ids.js';
import { remoteInstructions } from '../integrations/http/instructions.js';
import { namespacedStore } from '../integrations/http/namespace.js';
import { remoteApprovals, runPlanningSession } from '../integrations/http/remote.js';
import { waitForRun } from '../integrations/http/streams.js';
import { readRun } from '../persistence/run-log.js';
import { ApprovalQueue, type ToolRisk } from '../guardrails/approvals.js';
import { planRunnable } from '../plan/engine/execute.js';
import { PlanningSession, type PlanningSessionOptions } from '../plan/session/planning-session.js';
import { instantiatePlanTemplate, type TemplateValue } from '../plan/templates/template.js';
import { fromPreset } from '../squad/from-preset.js';
import { listCheckpoints } from '../travel/checkpoints.js';
import { forkRun, startRecord } from '../travel/fork.js';
import type { RunEvents } from '../travel/checkpoints.js';
import type { PlanControl } from '../plan/live/control.js';
import { planRunnableOfRun } from './travel-common.js';
import { replayRun } from '../travel/what-if.js';
import { uiHandler } from '../ui/serve.js';
import { catalogEntries, type DevCatalog } from './dev-catalog.js';

/** Options of {@link devApp}. */
export interface DevAppOptions {
  catalog: DevCatalog;
  adapter: ModelAdapter;
  /** The adapter's name, for the page. */
  adapterName: string;
  /** Where runs are logged (it needs compare-and-set: a memory or file store). */
  store: Store;
  /** Tools the workers of plans get (and the approvals they go through). */
  tools?: ToolDefinition[];
  toolRisks?: Record<string, ToolRisk>;
  /** Options of the planning sessions the lead runs. */
  planning?: Partial<Omit<PlanningSessionOptions, 'adapter' | 'runId' | 'store'>>;
  /** How often the server looks for events and answers, in ms. Default: 250. */
  pollMs?: number;
  /** The page's title. */
  title?: string;
  /** Tool names of the agent files mapped to tools (`--tool-map`; `null`: left out without a warning). */
  toolAliases?: Record<string, string | null>;
}

/** A run's target, as `POST /api/runs` names it and the run's record keeps it. */
interface Target {
  kind: 'planning' | 'agent' | 'team' | 'template' | 'squad';
  name: string;
  source?: string;
  values?: Record<string, TemplateValue>;
}

/** The tenant every request of this machine is in. */
const LOCAL: Principal = { tenant: 'local' };
const devRunKey = (runId: string) => `dev/runs/${runId}`;

/** The handler of `troupe dev`. */
export function devApp(options: DevAppOptions): { handle: Handler; store: Store } {
  const tenant = namespacedStore(options.store, LOCAL.tenant);
  const ask = defined({ pollMs: options.pollMs });
  const api = runHandler({
    store: options.store,
    basePath: '/api',
    authorize: (request) => (isLocal(request) ? LOCAL : { status: 403, message: 'troupe dev answers only pages it served on this machine' }),
    ...ask,
    start: async ({ store, runId, input, body }) => {
      const target = targetOf(body);
      await store.set(devRunKey(runId), { input, target });
      startTarget(options, store, runId, input, target);
    },
  });
  const ui = uiHandler({ endpoint: '/api', title: options.title ?? 'troupe dev' });
  const routes: Record<string, (request: Request, runId: string) => Promise<Response>> = {
    'GET checkpoints': async (request, runId) => jsonResponse(200, { checkpoints: await checkpointsOf(tenant, runId, request.signal) }),
    'POST replay': (_request, runId) => replay(options, tenant, runId),
    'POST fork': (request, runId) => fork(options, tenant, runId, request),
  };
  const handle: Handler = async (request) => {
    const { pathname } = new URL(request.url);
    if (!isLocal(request)) return errorResponse(403, 'forbidden', 'troupe dev answers only pages it served on this machine');
    if (!pathname.startsWith('/api/')) return ui(request);
    if (pathname === '/api/catalog' && request.method === 'GET') return jsonResponse(200, { folder: options.catalog.folder, adapter: options.adapterName, entries: catalogEntries(options.catalog), problems: options.catalog.problems, features: { report: true, replay: true, fork: true, instructions: true } });
    if (pathname === '/api/runs' && request.method === 'GET') return listRuns(api, tenant, request);
    const [, , , runId, action, extra] = pathname.split('/');
    const route = runId && action && extra === undefined ? routes[`${request.method} ${action}`] : undefined;
    if (!route) return api(request);
    if (!isSafeId(runId)) return errorResponse(400, 'invalid_id', 'Not a valid run id');
    try {
      return await route(request, runId!);
    } catch (error) {
      const status = isTroupeError(error, 'unknown_run') ? 404 : isTroupeError(error) && error.code !== 'execution_failed' ? 400 : 500;
      return errorResponse(status, isTroupeError(error) ? error.code : 'internal', errorMessage(error));
    }
  };
  return { handle, store: tenant };
}

/** A request of this machine: its host is 127.0.0.1 or localhost, and it comes from no other page. */
function isLocal(request: Request): boolean {
  const host = new URL(request.url).hostname;
  const hostHeader = request.headers.get('host');
  const named = hostHeader === null ? host : hostnameOf(hostHeader);
  if (named !== '127.0.0.1' && named !== 'localhost' && named !== '[::1]') return false;
  const origin = request.headers.get('origin');
  if (origin !== null && origin !== `http://${hostHeader ?? host}`) return false;
  return request.headers.get('sec-fetch-site') !== 'cross-site';
}

/** The host name of a `Host` header, without its port. */
function hostnameOf(header: string): string {
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.indexOf(':');
  return colon < 0 ? header : header.slice(0, colon);
}

function targetOf(body: unknown): Target {
  const raw = (body as { target?: unknown } | null)?.target as Partial<Target> | undefined;
  if (!raw || typeof raw !== 'object') return { kind: 'planning', name: 'lead' };
  const kinds = ['planning', 'agent', 'team', 'template', 'squad'];
  if (!kinds.includes(String(raw.kind)) || typeof raw.name !== 'string') throw new ConfigurationError(`Expected \`target\` to be { kind: ${kinds.join(' | ')}, name }, got ${JSON.stringify(raw)}`, { code: 'invalid_argument' });
  return { kind: raw.kind!, name: raw.name, ...defined({ source: typeof raw.source === 'string' ? raw.source : undefined, values: raw.values && typeof raw.values === 'object' ? (raw.values as Record<string, TemplateValue>) : undefined }) };
}

/** Start the run of `target` in the background, cancellable through the store. */
function startTarget(options: DevAppOptions, store: Store, runId: string, input: string, target: Target): void {
  // The requests go to the run's store also from a planning session's execution, which runs without one.
  const approvals = new ApprovalQueue({ handler: remoteApprovals({ store, ...defined({ pollMs: options.pollMs }) }), store });
  const watch = cancellationSignal(runId, { store, ...defined({ pollMs: options.pollMs }) });
  if (target.kind === 'planning') {
    const session = new PlanningSession({ ...options.planning, adapter: options.adapter, runId, approvals, ...defined({ tools: options.tools, toolRisks: options.toolRisks }) });
    void runPlanningSession(session, input, { store, signal: watch.signal, ...defined({ pollMs: options.pollMs }) })
      .catch(() => undefined)
      .finally(() => watch.close());
    return;
  }
  const feed = remoteInstructions(runId, { store, ...defined({ pollMs: options.pollMs }) });
  const runnable = runnableOf(options, target, approvals, feed.instructions);
  const handle = startRun(runnable, input, { adapter: options.adapter, store, runId, signal: watch.signal });
  void handle.result.catch(() => undefined).finally(() => (watch.close(), feed.close()));
}

/** The runnable of a target (every kind but the planning session, which is driven, not run). */
function runnableOf(options: DevAppOptions, target: Target, approvals: ApprovalQueue, instructions?: () => string[]): Runnable {
  const { catalog } = options;
  switch (target.kind) {
    case 'agent':
    case 'team': {
      const flows = compileAgents(catalog.agents, { unknownTools: 'warn', approvals, ...defined({ toolAliases: options.toolAliases }) });
      const flow = flows[target.name];
      if (!flow) throw new ConfigurationError(`No agent "${target.name}" in ${catalog.folder}`, { code: 'unknown_agent' });
      return flow;
    }
    case 'template': {
      const template = catalog.templates.get(target.name);
      if (!template) throw new ConfigurationError(`No plan template "${target.name}"`, { code: 'invalid_argument' });
      const { plan } = instantiatePlanTemplate(template, target.values ?? {});
      return planRunnable(plan, { approvals, ...defined({ tools: options.tools, toolRisks: options.toolRisks, instructions }) });
    }
    case 'squad': {
      const { repo, builtin, user } = catalog.squads;
      const list = target.source === 'repo' ? (repo ? [repo] : []) : target.source === 'user' ? user : target.source === 'builtin' ? builtin : [...(repo ? [repo] : []), ...user, ...builtin];
      const preset = list.find((p) => p.name === target.name);
      if (!preset) throw new ConfigurationError(`No squad preset "${target.name}"`, { code: 'invalid_argument' });
      return fromPreset(preset);
    }
    default:
      throw new ConfigurationError('A planning session is driven from the page; it cannot be replayed or forked (open it instead)', { code: 'invalid_argument' });
  }
}

async function targetOfRun(store: Store, runId: string): Promise<{ input: string; target: Target | undefined }> {
  const record = (await store.get(devRunKey(runId))) as { input?: string; target?: Target } | undefined;
  return { input: record?.input ?? '', target: record?.target };
}

/**
 * The runnable a logged run is run again with: a plan run's rebuilt from
 * its log, which holds the plan (as `troupe replay` and `troupe fork` do;
 * the template it was filled in from may have changed since, or be gone),
 * any other run's from its target in the catalogue.
 */
function runnableOfRun(options: DevAppOptions, runId: string, recorded: RunEvents, target: Target | undefined, approvals: ApprovalQueue): { runnable: Runnable; control?: PlanControl } {
  if (target === undefined || target.kind === 'template') {
    const rebuilt = planRunnableOfRun(recorded, { approvals, ...defined({ tools: options.tools, toolRisks: options.toolRisks }) });
    if (rebuilt) return rebuilt;
  }
  if (target === undefined) throw new ConfigurationError(`Run ${runId} was not started by troupe dev and is not a plan run, so it cannot be run again here`, { code: 'unknown_run' });
  return { runnable: runnableOf(options, target, approvals) };
}

async function checkpointsOf(store: Store, runId: string, signal: AbortSignal) {
  const log = await readRun(runId, { store, signal });
  if (log.events.length === 0) throw new ConfigurationError(`No run ${runId}`, { code: 'unknown_run' });
  return listCheckpoints(log).map((c) => ({ index: c.id, kind: c.kind, name: c.name, path: c.path, time: c.time, finished: c.finished, summary: c.summary }));
}

/** Replay a run with no model call, as a new run; answers with its id once it has logged. */
async function replay(options: DevAppOptions, store: Store, runId: string): Promise<Response> {
  const { input, target } = await targetOfRun(store, runId);
  const approvals = new ApprovalQueue({ handler: () => ({ approved: true }) });
  const recorded = await readRun(runId, { store });
  if (recorded.events.length === 0) throw new ConfigurationError(`No run ${runId}`, { code: 'unknown_run' });
  const { runnable, control } = runnableOfRun(options, runId, { ...recorded, runId }, target, approvals);
  const replayId = randomUUID();
  await store.set(devRunKey(replayId), { input: input || startRecord(recorded).input, ...defined({ target }), replayOf: runId });
  void replayRun(runnable, recorded, { store, runId: replayId, ...defined({ control }) }).catch(() => undefined);
  if (!(await waitForRun(replayId, { store, timeoutMs: 10_000 }))) return errorResponse(504, 'start_timeout', 'The replay logged nothing in time');
  return jsonResponse(201, { runId: replayId });
}

/** Fork a run at a checkpoint and continue the fork; answers with its id. */
async function fork(options: DevAppOptions, store: Store, runId: string, request: Request): Promise<Response> {
  const body = (await request.json().catch(() => ({}))) as { checkpoint?: unknown };
  if (typeof body.checkpoint !== 'number' || !Number.isInteger(body.checkpoint)) return errorResponse(400, 'invalid_argument', 'Expected `checkpoint` to be a checkpoint number');
  const { input, target } = await targetOfRun(store, runId);
  const approvals = new ApprovalQueue({ handler: remoteApprovals({ store, ...defined({ pollMs: options.pollMs }) }), store });
  const recorded = await readRun(runId, { store });
  if (recorded.events.length === 0) throw new ConfigurationError(`No run ${runId}`, { code: 'unknown_run' });
  const { runnable } = runnableOfRun(options, runId, { ...recorded, runId }, target, approvals);
  const forked = await forkRun(runId, { store, at: body.checkpoint });
  await store.set(devRunKey(forked.forkId), { input: input || forked.input, ...defined({ target }), forkOf: runId });
  const watch = cancellationSignal(forked.forkId, { store, ...defined({ pollMs: options.pollMs }) });
  void resume(runnable, forked.forkId, { store, adapter: options.adapter, signal: watch.signal })
    .catch(() => undefined)
    .finally(() => watch.close());
  return jsonResponse(201, { runId: forked.forkId });
}

/** `GET /api/runs`, each run with the input it was started with. */
async function listRuns(api: Handler, store: Store, request: Request): Promise<Response> {
  const response = await api(request);
  if (!response.ok) return response;
  const { runs } = (await response.json()) as { runs: Array<{ runId: string }> };
  const withInput = await Promise.all(
    runs.map(async (run) => {
      const record = (await store.get(devRunKey(run.runId))) as { input?: string; target?: Target } | undefined;
      return { ...run, ...defined({ input: record?.input, target: record?.target }) };
    }),
  );
  return jsonResponse(200, { runs: withInput });
}
