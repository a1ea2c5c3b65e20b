// docs/conventions.md decides one word per idea; this test reads the public
// API with the compiler (every entry point: scripts/public-api.ts) and
// fails when a public option, property, method or status uses a word the
// page retired.
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type { PublicApi } from '../scripts/public-api.js';
import { outcomeStatuses } from '../src/core/outcome.js';
import { sharedPublicApi } from './helpers/compiler.js';

/** Member names (options, properties, methods) the conventions retired, with the word that replaced each. */
const retiredMembers: Record<string, string> = {
  abort: 'cancel',
  stop: 'cancel (a run) or close (a watcher)',
  halt: 'cancel',
  shutdownWorker: 'removeWorker',
  inject: 'post',
  postMessage: 'post',
  dispose: 'close',
  orchestrator: 'lead',
  coordinator: 'lead',
  orchestratorPrompt: 'leadPrompt',
  orchestratorName: 'leadName',
  maxRetriesPerChunk: 'retry.maxRetries',
  retryDelayMs: 'retry.delayMs',
  repromptOnRetry: 'retry.reprompt',
  maxConsecutiveErrors: 'retry.maxRetries',
  retryBackoffMs: 'retry.delayMs',
  defaultRetryAfterMs: 'retry.delayMs',
  chunkBudget: 'budget.chunk',
  capacity: 'maxParallel',
  maxConcurrency: 'maxParallel',
  concurrency: 'maxParallel',
  stoppedBy: 'reason',
};

/** Status words the conventions retired. */
const retiredStatuses: Record<string, string> = {
  succeeded: 'completed',
  done: 'completed',
  aborted: 'cancelled',
  'goal-met': "status 'completed', reason 'goal-met'",
  'max-iterations': "status 'completed', reason 'max-iterations'",
  stalled: "status 'completed', reason 'stalled'",
  'error-budget': "status 'failed', reason 'error-budget'",
  consensus: "status 'completed', reason 'consensus'",
  coordinator: "status 'completed', reason 'lead-decided'",
  'max-rounds': "status 'completed', reason 'max-rounds'",
  maxRounds: "'max-rounds'",
  coordinatorDecides: "'lead-decides'",
};

/** Retired only where they mean the retired idea: member name → where (a pattern over the path). */
const retiredIn: Array<{ name: string; where: RegExp; use: string }> = [
  // A plan's per-chunk budgets; a run's chain of budgets (`ctx.budgets`, the report's) is another idea.
  { name: 'budgets', where: /executePlan|planRunnable|PlanningSession|PlanRunOptions/, use: 'budget.chunks' },
];

/** Members that keep a retired word because it names another idea. */
const kept = new Set<string>([
  // OpenTelemetry's own word for writing a trace context into a carrier.
  'troupe/otel:otelTracing().inject',
  // A field of squad presets and of the team registry's stored documents (a file format users keep on disk):
  // renaming it would make their saved presets and registries unreadable without a migration.
  'troupe/squad:CheckedPresetModels.preset.orchestratorPrompt',
  'troupe/squad:SquadPreset.orchestratorPrompt',
  'troupe/persistence:TeamGroup.orchestratorPrompt',
]);

interface Found {
  where: string;
  name: string;
}

function membersOf(api: PublicApi): { members: Found[]; statuses: Found[] } {
  const { checker } = api;
  const members: Found[] = [];
  const statuses: Found[] = [];
  const seen = new Set<ts.Type>();
  const visitType = (type: ts.Type, where: string, depth: number, statusContext: boolean) => {
    if (seen.has(type) || depth > 3) return;
    seen.add(type);
    if (type.isUnion()) {
      for (const t of type.types) visitType(t, where, depth, statusContext);
      return;
    }
    if (type.isStringLiteral()) {
      if (statusContext) statuses.push({ where, name: type.value });
      return;
    }
    if (!(type.flags & ts.TypeFlags.Object)) return;
    const symbol = type.getSymbol();
    // Platform and dependency types are not troupe's words.
    const file = symbol?.declarations?.[0]?.getSourceFile().fileName ?? '';
    if (file.includes('node_modules')) return;
    for (const property of type.getProperties()) {
      const name = property.getName();
      if (name.startsWith('#') || name.startsWith('__')) continue;
      const declaration = property.declarations?.[0];
      if (declaration?.getSourceFile().fileName.includes('node_modules')) continue;
      // Left out of the published declarations (stripInternal).
      if (declaration && ts.getJSDocTags(declaration).some((t) => t.tagName.text === 'internal')) continue;
      members.push({ where: `${where}.${name}`, name });
      if (!declaration) continue;
      const propertyType = checker.getTypeOfSymbolAtLocation(property, declaration);
      visitType(propertyType, `${where}.${name}`, depth + 1, /status|phase|mode$/i.test(name));
    }
    for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
      for (const parameter of signature.getParameters()) {
        const declaration = parameter.declarations?.[0];
        if (!declaration) continue;
        visitType(checker.getTypeOfSymbolAtLocation(parameter, declaration), `${where}(${parameter.getName()})`, depth + 1, false);
      }
      visitType(signature.getReturnType(), `${where}()`, depth + 1, false);
    }
  };
  for (const [entry, symbols] of api.entries) {
    for (const exported of symbols) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declaration = symbol.declarations?.[0];
      if (!declaration) continue;
      const where = `${entry}:${exported.getName()}`;
      const isStatusType = /(Status|Phase|Mode)$/.test(exported.getName());
      if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class)) {
        visitType(checker.getDeclaredTypeOfSymbol(symbol), where, 0, isStatusType);
      }
      if (symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class | ts.SymbolFlags.Variable)) {
        visitType(checker.getTypeOfSymbolAtLocation(symbol, declaration), where, 0, isStatusType);
      }
    }
  }
  return { members, statuses };
}

describe('docs/conventions.md: one word per idea', () => {
  it('outcome statuses are the five of the page', () => {
    expect([...outcomeStatuses]).toEqual(['completed', 'failed', 'cancelled', 'paused', 'budget-exhausted']);
  });

  it('no public option, property or method uses a retired name, and no status a retired word', { timeout: 180_000 }, () => {
    const { members, statuses } = membersOf(sharedPublicApi());
    const badMembers = [
      ...members.filter((m) => m.name in retiredMembers && !kept.has(m.where)).map((m) => `${m.where} (use ${retiredMembers[m.name]})`),
      ...members.flatMap((m) => retiredIn.filter((r) => r.name === m.name && r.where.test(m.where)).map((r) => `${m.where} (use ${r.use})`)),
    ];
    const badStatuses = statuses.filter((s) => s.name in retiredStatuses && !kept.has(s.where)).map((s) => `${s.where}: '${s.name}' (use ${retiredStatuses[s.name]})`);
    expect([...new Set(badMembers)]).toEqual([]);
    expect([...new Set(badStatuses)]).toEqual([]);
  });
});
