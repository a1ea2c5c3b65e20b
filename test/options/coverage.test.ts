// Every exported function and constructor that takes an options object
// (found by the compiler in every entry point: scripts/public-api.ts) has a
// recipe in ./recipes, so test/options/unknown-keys.test.ts checks that it
// refuses an unknown key. Error classes are left out: their options are the
// error's cause and details, for troupe's own use.
import { describe, expect, it } from 'vitest';
import { functionsTakingOptions, publicApi } from '../../scripts/public-api.js';
import { recipes } from './recipes/index.js';

/**
 * Functions still to describe their options (docs/conventions.md, "Options"):
 * each moves to a recipe once it checks them. Empty when every one does.
 */
const pending = new Set<string>([
  'ApprovalQueue', 'ContextWindow', 'MessageBus', 'PlanControl', 'PlanningSession', 'SessionHandle', 'StallDetector',
  'StuckDetector', 'TaskStore', 'adapterFromEnv', 'adapterSuite', 'advisors', 'agent', 'aggregate', 'aguiEventStream',
  'aiSdkAdapter', 'answerRequest', 'asTool', 'askPerson', 'askPersonTool', 'broadcast', 'buildReportData',
  'bullmqExecutor', 'cancellationSignal', 'checkPresetModels', 'classifierGuardrail', 'claudeCodeProfile',
  'codexProfile', 'compileAgents', 'consultAdvisors', 'coordinate', 'copilotProfile', 'createToolServer', 'decompose',
  'deleteGroup', 'directExecutor', 'discoverSquad', 'executePlan', 'exportRun', 'fileLocking', 'fileStore', 'findJson',
  'findSquadDir', 'followRunLog', 'forkRun', 'formatWhatIf', 'fromPreset', 'gitWorktree', 'handoff', 'handoffChoices',
  'inProcessExecutor', 'inspectAgents', 'lastMessages', 'learnFromStats', 'listRuns', 'loadAgentFolder', 'loadAgents',
  'loadOutcomeStats', 'loadUserPresets', 'openSession', 'openaiAdapter', 'orchestrate', 'otelTracing',
  'outcomeSummary', 'parseAgentFile', 'parseSquad', 'pendingRequests', 'planRunnable', 'positionAfterRequests',
  'processAdapter', 'pruneRuns', 'queueMetrics', 'rateLimited', 'readRequest', 'readRun', 'reconcile',
  'recordChunkResult', 'recordOutcomes', 'recordRunOutcomes', 'recordingAdapter', 'redisRateLimitState', 'redisStore',
  'reflect', 'remote', 'remoteApprovals', 'renderRunReport', 'reopenDoubledFence', 'replayAdapter', 'replayRun',
  'requestCancel', 'resolveAgentMcpServers', 'resolveAgentModel', 'resolveAgentTools', 'resolvePlanApproval', 'router',
  'runEventStream', 'runGuarded', 'runHandler', 'runPlanningSession', 'runState', 'runToolLoop', 'runsOnCli',
  'safeFindJson', 'safeParseAgentFile', 'saveTeamAsPreset', 'scriptedAdapter', 'sequential', 'serveTools',
  'sharedPool', 'splitFrontMatter', 'sseFrame', 'sseStream', 'startToolBridge', 'startWorker', 'storeSuite', 'team',
  'teamRegistry', 'timeline', 'toNodeListener', 'usedLearning', 'validateAgents', 'validateGuardrailOptions',
  'waitForRun', 'whatIf', 'whatIfAdapter', 'withBudget', 'withFallback', 'withGuardrails', 'withTimeout',
  'workspaceSuite', 'writeSquad',
]);

describe('options of the public API', () => {
  it('every function and constructor that takes options has a recipe (or is still pending)', { timeout: 120_000 }, () => {
    const found = [...functionsTakingOptions(publicApi()).keys()].filter((name) => !name.endsWith('Error'));
    expect(found.filter((name) => !(name in recipes) && !pending.has(name))).toEqual([]);
    expect([...pending].filter((name) => name in recipes), 'pending names that have a recipe now').toEqual([]);
    expect([...pending].filter((name) => !found.includes(name)), 'pending names that are no longer public').toEqual([]);
  });
});
