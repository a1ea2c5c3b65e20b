/**
 * `a2aAgent(url)`: a remote A2A agent as a runnable, so every pattern can
 * use one (a hand-off target, an advisor, a router destination, a team or
 * broadcast member). Its card is read and checked first; each run is one
 * remote task, followed to its end with its updates as events of the run
 * (a troupe agent's ops join the op tree), its artifacts as the output, its
 * usage when it reports it, and cancellation carried to the remote task.
 * @module
 */
import type { AgentCard } from '@a2a-js/sdk';
import type { RunContext } from '../../core/context.js';
import { ConfigurationError, describeValue } from '../../core/errors.js';
import { outcomeStatuses, type Outcome, type OutcomeStatus } from '../../core/outcome.js';
import type { Runnable } from '../../core/runnable.js';
import { supportsCompareAndSet } from '../../core/store.js';
import { emptyUsage } from '../../core/usage.js';
import { RemoteMirror, type RemoteEvent } from '../bullmq/mirror.js';
import type { InputKind } from '../http/events.js';
import { askPerson } from '../http/requests.js';
import type { A2AAgentSkill } from './card.js';
import { A2AConnection, type A2AConnectionOptions, type CheckedCard, type RemoteInputRequest, type TaskUpdate } from './client.js';
import { RemoteAgentError } from './errors.js';
import { connectionShape, expectFunction } from './options.js';
import { anything, defineOptions, type OptionsDescription } from '../../core/options.js';

/** What answers a remote agent's request for input: text, or a structured answer (sent as a data part). */
export type A2AAnswer = (request: RemoteInputRequest & { signal: AbortSignal }) => Promise<string | Record<string, unknown>>;

/** Options of {@link a2aAgent}. */
export interface A2AAgentOptions extends A2AConnectionOptions {
  /** The runnable's name (and the agent of its outcomes). Default: the last segment of the URL's path, else its host. */
  name?: string;
  /**
   * Answers the remote agent's requests for input. Default: a person,
   * through the run's store (`askPerson` of `troupe/http`: the request is
   * on the run's event stream, answered with `POST /runs/:id/requests/:id`);
   * a run without a store that has compare-and-set fails with a
   * `RemoteAgentError` (`input_required`).
   */
  answer?: A2AAnswer;
}

const a2aAgentOptions = defineOptions<A2AAgentOptions>('a2aAgent', { ...connectionShape, name: anything, answer: anything });

/** A remote agent's card as troupe read it. */
export interface RemoteAgentCard {
  name: string;
  description: string;
  version: string;
  skills: A2AAgentSkill[];
  /** Where the card was read. */
  cardUrl: string;
  /** The endpoint used, its binding (`JSONRPC` or `HTTP+JSON`) and protocol version. */
  endpoint: string;
  binding: string;
  protocolVersion: string;
  /** Whether the agent streams its tasks (else troupe polls them). */
  streaming: boolean;
}

/** A remote A2A agent as a runnable. */
export interface A2AAgent extends Runnable<Outcome> {
  readonly kind: 'a2a';
  /** The agent's URL (or its card's). */
  readonly url: string;
  /** Read and check the agent's card (once; runs do it first). */
  card(signal?: AbortSignal): Promise<RemoteAgentCard>;
}

/** Check the options shared by {@link a2aAgent} and `a2aAdapter`. */
export function checkRemoteOptions<T extends object>(url: unknown, options: T, description: OptionsDescription<T>): string {
  description.check(options);
  if (typeof url !== 'string') throw new ConfigurationError(`Expected \`url\` to be the agent's URL, got ${describeValue(url)}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigurationError(`Expected \`url\` to be the agent's URL, got ${describeValue(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigurationError(`Expected \`url\` to be an http(s) URL, got ${describeValue(url)}`);
  const o = options as A2AConnectionOptions & { answer?: unknown };
  expectFunction('answer', o.answer);
  if (o.headers !== undefined && typeof o.headers !== 'function' && (typeof o.headers !== 'object' || o.headers === null)) throw new ConfigurationError(`Expected \`headers\` to be an object or a function, got ${describeValue(o.headers)}`);
  for (const [name, value] of [['requestTimeoutMs', o.requestTimeoutMs], ['maxCardBytes', o.maxCardBytes], ['pollMs', o.pollMs]] as const) {
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) throw new ConfigurationError(`Expected \`${name}\` to be a positive number, got ${describeValue(value)}`);
  }
  if (o.reconnects !== undefined && !(Number.isInteger(o.reconnects) && o.reconnects >= 0)) throw new ConfigurationError(`Expected \`reconnects\` to be a whole number of at least 0, got ${describeValue(o.reconnects)}`);
  if (o.skill !== undefined && typeof o.skill !== 'string' && !(Array.isArray(o.skill) && o.skill.every((s) => typeof s === 'string'))) throw new ConfigurationError(`Expected \`skill\` to be a skill id or a list of them, got ${describeValue(o.skill)}`);
  for (const origin of o.allowedOrigins ?? []) {
    if (typeof origin !== 'string' || !/^https?:\/\/[^/]+$/.test(origin)) throw new ConfigurationError(`Expected every entry of \`allowedOrigins\` to be an origin (http://host:port), got ${describeValue(origin)}`);
  }
  return parsed.href;
}

/** The name of a remote agent from its URL: the last path segment, else the host. */
export function nameFromUrl(url: string): string {
  const parsed = new URL(url);
  const segments = parsed.pathname.split('/').filter((s) => s !== '' && s !== '.well-known' && !s.endsWith('.json'));
  return segments.at(-1) ?? parsed.host;
}

/** The public summary of a checked card. */
export function summary(checked: CheckedCard): RemoteAgentCard {
  const card: AgentCard = checked.card;
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    skills: card.skills.map((s) => ({ id: s.id, name: s.name, description: s.description, tags: [...s.tags], ...(s.examples.length ? { examples: [...s.examples] } : {}) })),
    cardUrl: checked.cardUrl,
    endpoint: checked.endpoint,
    binding: checked.binding,
    protocolVersion: checked.version,
    streaming: checked.streaming,
  };
}

/**
 * A runnable that sends each run to the A2A agent at `url` (its base URL,
 * or its card's URL) as a task. The card is read and checked first (a
 * card that does not list `skill`, or names an endpoint on another origin,
 * is refused with a `RemoteAgentError` before anything is sent). The run
 * opens one op (kind `a2a`): the remote's status updates and artifacts are
 * `a2a.status` and `a2a.artifact` events in it, and a troupe agent's own
 * ops join the op tree under it. The task's artifacts are the output; the
 * usage it reports counts toward the run. When the remote asks for input,
 * `answer` (default: a person, through the run's store) answers it.
 * Aborting the run cancels the remote task. Every failure of the agent or
 * the network is a `RemoteAgentError` with a `reason`. Loads
 * `@a2a-js/sdk` (an optional peer) on first use.
 *
 * @example
 * ```ts
 * const security = a2aAgent('https://reviews.example.com/security', { skill: 'review', headers: { authorization: `Bearer ${token}` } });
 * const panel = advisors(lead, [security, style]);
 * ```
 */
export function a2aAgent(url: string, options: A2AAgentOptions = {}): A2AAgent {
  const href = checkRemoteOptions(url, options, a2aAgentOptions);
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name.trim() === '')) throw new ConfigurationError(`Expected \`name\` to be a non-empty string, got ${describeValue(options.name)}`);
  const name = options.name ?? nameFromUrl(href);
  const { name: _name, answer, ...connection } = options;
  const conn = new A2AConnection(href, connection);

  async function runRemote(input: string, ctx: RunContext): Promise<Omit<Outcome, 'usage'>> {
    const checked = await conn.card(ctx.signal);
    const card = summary(checked);
    ctx.emit('a2a.card', { url: href, name: card.name, version: card.version, skills: card.skills.map((s) => s.id), endpoint: card.endpoint, binding: card.binding, streaming: card.streaming });
    const mirror = new RemoteMirror(ctx);
    const onUpdate = (update: TaskUpdate) => {
      if (update.kind === 'troupe-event') return mirror.apply(update.taskId, [update.event as RemoteEvent]);
      if (update.kind === 'artifact') return ctx.emit('a2a.artifact', { agent: name, taskId: update.taskId, artifactId: update.artifactId, text: update.text, append: update.append, ...(update.name ? { name: update.name } : {}) });
      ctx.emit('a2a.status', { agent: name, taskId: update.taskId, contextId: update.contextId, state: update.state, ...(update.text === undefined ? {} : { text: update.text }) });
    };
    try {
      const result = await conn.runTask(input, {
        signal: ctx.signal,
        onUpdate,
        ask: (request) => (answer ? answer({ ...request, signal: ctx.signal }) : askThroughStore(ctx, name, request)),
        onCancelled: (taskId, acknowledged, error) => ctx.emit('a2a.cancelled', { agent: name, taskId, acknowledged, ...(error === undefined ? {} : { error }) }),
      });
      mirror.close('failed', 'The remote task ended without closing this op');
      const mirrored = mirror.usage();
      if (result.usage && mirrored.turns + mirrored.inputTokens + mirrored.outputTokens + mirrored.costUsd === 0) ctx.recordUsage({ ...emptyUsage(), ...result.usage, turns: result.usage.turns || 1 });
      const status: OutcomeStatus = (outcomeStatuses as readonly string[]).includes(result.status ?? '') ? (result.status as OutcomeStatus) : 'completed';
      return { output: result.output, agent: name, status };
    } catch (error) {
      mirror.close(ctx.signal.aborted ? 'cancelled' : 'failed', error instanceof Error ? error.message : String(error));
      throw error;
    }
  }

  return {
    name,
    kind: 'a2a',
    url: href,
    card: async (signal) => summary(await conn.card(signal)),
    run: (input, parent) => parent.enter({ kind: 'a2a', name, agent: name }, (ctx) => runRemote(input, ctx)),
  };
}

const KINDS = new Set<InputKind>(['approval', 'question', 'plan-approval']);

/**
 * Ask a person what the remote agent asks, through the run's store: a
 * troupe agent's request keeps its kind (an approval stays an approval,
 * and its answer goes back as data); any other agent's is a question.
 */
async function askThroughStore(ctx: RunContext, agent: string, request: RemoteInputRequest): Promise<string | Record<string, unknown>> {
  if (!ctx.store || !supportsCompareAndSet(ctx.store)) {
    throw new RemoteAgentError('input_required', `${agent} asks for input ("${request.prompt.slice(0, 200)}"), and this run cannot ask a person: give the run a store with compare-and-set, or \`answer\``, { details: { taskId: request.taskId } });
  }
  const troupe = (request.data as { troupe?: { kind?: unknown; tool?: unknown; arguments?: unknown; questions?: unknown; plan?: unknown } } | undefined)?.troupe;
  const kind = typeof troupe?.kind === 'string' && KINDS.has(troupe.kind as InputKind) ? (troupe.kind as InputKind) : 'question';
  if (kind === 'question') return (await askPerson(ctx, { kind, prompt: `${agent} asks: ${request.prompt}`, agent })).text;
  const asked = await askPerson(ctx, {
    kind,
    prompt: `${agent} asks: ${request.prompt}`,
    agent,
    ...(typeof troupe?.tool === 'string' ? { tool: troupe.tool } : {}),
    ...(troupe?.arguments === undefined ? {} : { arguments: troupe.arguments }),
    ...(Array.isArray(troupe?.questions) ? { questions: troupe.questions.map(String) } : {}),
    ...(troupe?.plan === undefined ? {} : { plan: troupe.plan }),
  });
  return { ...asked };
}
