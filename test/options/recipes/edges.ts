// Recipes of the edges layer's functions (see ./types.ts): persistence,
// time travel, the integrations, the command line's helpers, views,
// workspaces and testing.
import { memoryStore } from '../../../src/core/memory-store.js';
import { exportRun, pruneRuns, readRun, timeline } from '../../../src/persistence/run-log.js';
import { listRuns } from '../../../src/persistence/runs.js';
import { deleteThread, listThreads, readThread, truncateThread } from '../../../src/persistence/threads.js';
import { deleteGroup, emptyTeamRegistry, reconcile, teamRegistry } from '../../../src/persistence/team-registry.js';
import { otelTracing } from '../../../src/integrations/otel/tracing.js';
import { buildReportData } from '../../../src/views/report/data.js';
import { renderRunReport } from '../../../src/views/report/render.js';
import { ChatModel } from '../../../src/ui/model.js';
import { forkRun } from '../../../src/travel/fork.js';
import { formatWhatIf } from '../../../src/travel/format.js';
import { whatIfAdapter } from '../../../src/travel/what-if-adapter.js';
import { replayRun, whatIf, type WhatIfReport } from '../../../src/travel/what-if.js';
import { agent } from '../../../src/patterns/agent.js';
import { cancellationSignal, requestCancel } from '../../../src/integrations/http/cancel.js';
import { followRunLog } from '../../../src/integrations/http/follow.js';
import { runHandler } from '../../../src/integrations/http/handler.js';
import { followInstructions, remoteInstructions, sendInstruction } from '../../../src/integrations/http/instructions.js';
import { createNodeServer, toNodeListener } from '../../../src/integrations/http/node.js';
import { askPersonTool, remoteApprovals, runPlanningSession } from '../../../src/integrations/http/remote.js';
import { resumingFetch } from '../../../src/integrations/http/resume.js';
import { answerRequest, askPerson, pendingRequests, readRequest } from '../../../src/integrations/http/requests.js';
import { sseFrame, sseStream } from '../../../src/integrations/http/sse.js';
import { aguiEventStream, positionAfterRequests, runEventStream, runState, waitForRun } from '../../../src/integrations/http/streams.js';
import { rateLimited } from '../../../src/adapters/rate-limit.js';
import { scriptedAdapter } from '../../../src/adapters/scripted.js';
import { bullmqExecutor } from '../../../src/integrations/bullmq/executor.js';
import { startWorker } from '../../../src/integrations/bullmq/worker.js';
import { queueMetrics } from '../../../src/integrations/bullmq/metrics.js';
import { remote } from '../../../src/integrations/bullmq/remote.js';
import { startToolBridge } from '../../../src/integrations/mcp/bridge.js';
import { serveTools } from '../../../src/integrations/mcp/serve.js';
import { createToolServer } from '../../../src/integrations/mcp/server.js';
import { redisRateLimitState } from '../../../src/integrations/redis/rate-limit.js';
import { redisStore } from '../../../src/integrations/redis/store.js';
import { adapterSuite } from '../../../src/testing/adapter-suite.js';
import { storeSuite } from '../../../src/testing/store-suite.js';
import { workspaceSuite } from '../../../src/testing/workspace-suite.js';
import { a2aAdapter } from '../../../src/integrations/a2a/adapter.js';
import { buildAgentCard } from '../../../src/integrations/a2a/card.js';
import { a2aAgent } from '../../../src/integrations/a2a/remote.js';
import { a2aServer } from '../../../src/integrations/a2a/server.js';
import { uiContentSecurityPolicy, uiHandler, uiPage } from '../../../src/ui/serve.js';
import { mcpHttpHandler } from '../../../src/integrations/mcp-teams/http.js';
import { serveTeamsOverStdio } from '../../../src/integrations/mcp-teams/stdio.js';
import { serveTeams } from '../../../src/integrations/mcp-teams/teams.js';
import { fileStore } from '../../../src/persistence/file-store.js';
import { withFallback } from '../../../src/workspaces/fallback.js';
import { fileLocking } from '../../../src/workspaces/file-locking.js';
import { gitWorktree } from '../../../src/workspaces/git-worktree.js';
import { inMemory } from '../../../src/workspaces/in-memory.js';
import type { Recipes } from './types.js';

const store = () => memoryStore();
const helper = () => agent({ name: 'helper' });
/** A logged run with nothing but its start. */
const recorded = { runId: 'r1', events: [{ type: 'run.started', runId: 'r1', time: 0, runnable: 'helper', input: 'hi' }] };
/** A team registry with one group. */
const registry = () => ({ ...emptyTeamRegistry(), groups: [{ id: 'g1', name: 'Group', mode: 'single' as const, sortOrder: 0 }] });
const usage = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, turns: 0 };
const side = { output: '', status: 'completed', usage, scores: {}, agents: {} };
const report: WhatIfReport = { runId: 'r2', changes: [], recorded: side, whatIf: side, calls: [], counts: { recorded: 0, live: 0, context: 0 }, liveUsage: usage, liveAgents: [], changedAgents: [], outputChanged: false, scores: [], regressed: false };

export const edgesRecipes: Recipes = {
  // troupe/persistence
  readRun: (extra) => readRun('run-1', { store: store(), ...extra }),
  timeline: (extra) => timeline('run-1', { store: store(), ...extra }),
  exportRun: (extra) => exportRun('run-1', { store: store(), ...extra }),
  listRuns: (extra) => listRuns({ store: store(), ...extra }),
  listThreads: (extra) => listThreads({ store: store(), ...extra }),
  readThread: (extra) => readThread('thread-1', { store: store(), ...extra }),
  truncateThread: (extra) => truncateThread('thread-1', { store: store(), keep: 0, ...extra }),
  deleteThread: (extra) => deleteThread('thread-1', { store: store(), ...extra }),
  pruneRuns: (extra) => pruneRuns({ store: store(), maxAgeMs: 1000, ...extra }),
  teamRegistry: (extra) => teamRegistry(store(), { ...extra }),
  deleteGroup: (extra) => deleteGroup(registry(), 'g1', { ...extra }),
  reconcile: (extra) => reconcile(registry(), [], { ...extra }),
  fileStore: (extra) => fileStore('/tmp/troupe-recipe-never-written', { ...extra }),
  // troupe/workspaces
  fileLocking: (extra) => fileLocking({ ...extra }),
  gitWorktree: (extra) => gitWorktree({ ...extra }),
  withFallback: (extra) => withFallback(inMemory(), inMemory(), { ...extra }),
  // troupe/travel
  forkRun: (extra) => forkRun('run-1', { store: store(), at: 1, ...extra }),
  whatIf: (extra) => whatIf(helper(), recorded, { ...extra }),
  replayRun: (extra) => replayRun(helper(), recorded, { ...extra }),
  whatIfAdapter: (extra) => whatIfAdapter([], { ...extra }),
  formatWhatIf: (extra) => formatWhatIf(report, { ...extra }),
  // troupe/http (each checks its options before it touches its other arguments)
  runHandler: (extra) => runHandler({ store: store(), authorize: () => ({ tenant: 'acme' }), ...extra }),
  runEventStream: (extra) => runEventStream('run-1', { store: store(), ...extra }),
  aguiEventStream: (extra) => aguiEventStream('run-1', { store: store(), aguiRunId: 'a1', ...extra }),
  runState: (extra) => runState('run-1', { store: store(), ...extra }),
  waitForRun: (extra) => waitForRun('run-1', { store: store(), timeoutMs: 0, ...extra }),
  positionAfterRequests: (extra) => positionAfterRequests('run-1', [], { store: store(), ...extra }),
  followRunLog: (extra) => followRunLog('run-1', { store: store(), ...extra }),
  sseStream: (extra) => sseStream(async () => undefined, { ...extra }),
  sseFrame: (extra) => sseFrame({}, { ...extra }),
  toNodeListener: (extra) => toNodeListener(() => new Response(), { ...extra }),
  createNodeServer: (extra) => createNodeServer(() => new Response(), { ...extra }),
  resumingFetch: (extra) => resumingFetch({ ...extra }),
  requestCancel: (extra) => requestCancel('run-1', { store: store(), ...extra }),
  cancellationSignal: (extra) => cancellationSignal('run-1', { store: store(), ...extra }).close(),
  askPerson: (extra) => askPerson({} as never, { kind: 'question', prompt: 'Which?' }, { ...extra }),
  answerRequest: (extra) => answerRequest('run-1', 'q1', { text: 'yes' }, { store: store(), ...extra }),
  pendingRequests: (extra) => pendingRequests('run-1', { store: store(), ...extra }),
  readRequest: (extra) => readRequest('run-1', 'q1', { store: store(), ...extra }),
  remoteApprovals: (extra) => remoteApprovals({ ...extra }),
  askPersonTool: (extra) => askPersonTool({ ...extra }),
  runPlanningSession: (extra) => runPlanningSession({} as never, 'task', { store: store(), ...extra }),
  sendInstruction: (extra) => sendInstruction('run-1', 'Use tabs.', { store: store(), ...extra }),
  followInstructions: (extra) => followInstructions('run-1', { store: store(), ...extra }),
  remoteInstructions: (extra) => remoteInstructions('run-1', { store: store(), ...extra }).close(),
  // troupe/adapters/rate-limit, troupe/redis, troupe/bullmq (each refuses before it connects)
  rateLimited: (extra) => rateLimited(scriptedAdapter(), { ...extra }),
  redisRateLimitState: (extra) => redisRateLimitState({ connection: 'redis://127.0.0.1:1', name: 'openai', ...extra }),
  redisStore: (extra) => redisStore({ connection: 'redis://127.0.0.1:1', ...extra }),
  bullmqExecutor: (extra) => bullmqExecutor({ connection: 'redis://127.0.0.1:1', ...extra }),
  startWorker: (extra) => startWorker({ connection: 'redis://127.0.0.1:1', adapter: scriptedAdapter(), ...extra }),
  remote: (extra) => remote('helper', { connection: 'redis://127.0.0.1:1', ...extra }),
  queueMetrics: (extra) => queueMetrics({} as never, { meter: {} as never, ...extra }),
  // troupe/testing (each refuses before it registers a test)
  adapterSuite: (extra) => adapterSuite('x', () => scriptedAdapter(), { ...extra }),
  storeSuite: (extra) => storeSuite('x', () => store(), { ...extra }),
  // troupe/a2a, troupe/ui
  a2aAgent: (extra) => a2aAgent('http://localhost:1/', { ...extra }),
  a2aAdapter: (extra) => a2aAdapter('http://localhost:1/', { ...extra }),
  a2aServer: (extra) => a2aServer({ runnable: helper(), store: store(), authorize: () => ({ tenant: 't' }), ...extra }),
  // troupe/mcp (each refuses before it loads the MCP SDK)
  serveTeams: (extra) => serveTeams({ teams: [], ...extra }),
  serveTeamsOverStdio: (extra) => serveTeamsOverStdio({ teams: [], ...extra }),
  createToolServer: (extra) => createToolServer({ tools: [], call: async () => ({ content: '' }), ...extra }),
  startToolBridge: (extra) => startToolBridge({ tools: [], call: async () => ({ content: '' }), ...extra }),
  serveTools: (extra) => serveTools([], { ctx: { emit() {} } as never, ...extra }),
  mcpHttpHandler: (extra) => mcpHttpHandler({ teams: [], authorize: () => ({ tenant: 't' }), ...extra }),
  buildAgentCard: (extra) => buildAgentCard({ runnable: 'helper', url: 'http://localhost/' }, { ...extra }),
  uiPage: (extra) => uiPage({ endpoint: '/api', ...extra }),
  uiHandler: (extra) => uiHandler({ endpoint: '/api', ...extra }),
  uiContentSecurityPolicy: (extra) => uiContentSecurityPolicy({ ...extra }),
  ChatModel: (extra) => new ChatModel({ ...extra }),
  // troupe/report, troupe/otel
  buildReportData: (extra) => buildReportData(recorded.events, { ...extra }),
  renderRunReport: (extra) => renderRunReport(recorded, { ...extra }),
  otelTracing: (extra) => otelTracing({ ...extra }),
  workspaceSuite: (extra) => workspaceSuite('x', () => ({ strategy: {} as never, baseDir: '.' }), { ...extra }),
};
