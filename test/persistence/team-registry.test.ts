import { readFileSync } from 'node:fs';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/core/clock.js';
import { fileStore } from '../../src/persistence/file-store.js';
import { memoryStore } from '../../src/core/memory-store.js';
import {
  TEAM_REGISTRY_SCHEMA_VERSION,
  deleteGroup,
  isMultiAgentGroup,
  parseTeamRegistry,
  reconcile,
  safeParseTeamRegistry,
  teamRegistry,
  type TeamRegistryState,
} from '../../src/persistence/team-registry.js';

const fixture = (v: number): unknown =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'persistence', `team-registry.v${v}.json`), 'utf8'));

describe('team registry', () => {
  it('loads every schema version, filling defaults', () => {
    const v1 = safeParseTeamRegistry(fixture(1));
    expect(v1).toMatchObject({ success: true, migratedFrom: 1 });
    const s1 = parseTeamRegistry(fixture(1));
    expect(s1.schemaVersion).toBe(TEAM_REGISTRY_SCHEMA_VERSION);
    expect(s1.groups.map((g) => [g.id, g.sortOrder])).toEqual([
      ['support', 0],
      ['release', 1],
    ]);
    expect(s1.members).toEqual([
      { name: 'triage', groupId: 'support', role: 'worker' },
      { name: 'lead', groupId: 'release', role: 'orchestrator' },
      { name: 'builder', groupId: 'release', role: 'worker', preferredModel: 'gpt-4.1' },
    ]);
    const s2 = parseTeamRegistry(fixture(2));
    expect(s2.groups.find((g) => g.id === 'misc')).toEqual({ id: 'misc', name: 'Misc', mode: 'single', sortOrder: 2 });
    expect(s2.members.find((m) => m.name === 'notes')).toEqual({ name: 'notes', groupId: 'misc', role: 'worker' });
    expect(s2.groups.find((g) => g.id === 'release')?.reflection).toEqual({ enabled: true, maxIterations: 3 });
    expect(parseTeamRegistry({ schemaVersion: 2 })).toEqual({ schemaVersion: TEAM_REGISTRY_SCHEMA_VERSION, groups: [], members: [] });
  });

  it('stores a group\'s orchestration mode; versions 1 and 2 migrate to it', () => {
    expect(TEAM_REGISTRY_SCHEMA_VERSION).toBe(3);
    const s3 = parseTeamRegistry(fixture(3));
    expect(s3.groups.map((g) => [g.id, g.mode, g.orchestration ?? null])).toEqual([
      ['support', 'single', null],
      ['release', 'multi', 'orchestrator-reflect'],
      ['review', 'multi', 'broadcast'], // an orchestration mode makes a group multi-agent
      ['pipeline', 'multi', 'sequential'],
      ['triage', 'multi', 'orchestrator'],
    ]);
    expect(s3.groups.map((g) => isMultiAgentGroup(s3, g.id))).toEqual([false, true, true, true, true]);
    expect(safeParseTeamRegistry(fixture(3))).not.toHaveProperty('migratedFrom');
    // Version 2 kept no mode: a multi-agent group with reflection enabled ran the reflect loop.
    expect(safeParseTeamRegistry(fixture(2))).toMatchObject({ success: true, migratedFrom: 2 });
    const s2 = parseTeamRegistry(fixture(2));
    expect(s2.groups.map((g) => [g.id, g.orchestration ?? null])).toEqual([['support', null], ['release', 'orchestrator-reflect'], ['misc', null]]);
    expect(parseTeamRegistry(fixture(1)).groups.map((g) => g.orchestration ?? null)).toEqual([null, null]);
    const disabled = { schemaVersion: 2, groups: [{ id: 'g', name: 'G', mode: 'multi', reflection: { enabled: false } }] };
    expect(parseTeamRegistry(disabled).groups[0]).not.toHaveProperty('orchestration');
    // A saved state reads back the same, and an unknown mode is refused.
    expect(parseTeamRegistry(JSON.parse(JSON.stringify(s3)))).toEqual(s3);
    const bad = safeParseTeamRegistry({ schemaVersion: 3, groups: [{ id: 'g', name: 'G', orchestration: 'round-robin' }] });
    expect(bad).toMatchObject({ success: false, error: expect.stringMatching(/orchestration/) });
  });

  it('recognises multi-agent groups by mode, an orchestrator, or a preferred model', () => {
    const state: TeamRegistryState = {
      schemaVersion: TEAM_REGISTRY_SCHEMA_VERSION,
      groups: [
        { id: 'a', name: 'A', mode: 'single', sortOrder: 0 },
        { id: 'b', name: 'B', mode: 'single', sortOrder: 1 },
        { id: 'c', name: 'C', mode: 'multi', sortOrder: 2 },
        { id: 'd', name: 'D', mode: 'single', sortOrder: 3 },
      ],
      members: [
        { name: 'x', groupId: 'a', role: 'orchestrator' },
        { name: 'y', groupId: 'b', role: 'worker', preferredModel: 'm' },
        { name: 'z', groupId: 'd', role: 'worker' },
      ],
    };
    expect(['a', 'b', 'c', 'd'].map((id) => isMultiAgentGroup(state, id))).toEqual([true, true, true, false]);
  });

  it('deletes a multi-agent group with its members, and moves the members of a single group', () => {
    const state = parseTeamRegistry(fixture(2));
    const multi = deleteGroup(state, 'release');
    expect(multi.removed.map((m) => m.name)).toEqual(['lead', 'builder']);
    expect(multi.state.members.map((m) => m.name)).toEqual(['triage', 'notes']);
    expect(multi.state.groups.map((g) => g.id)).toEqual(['support', 'misc']);
    const single = deleteGroup(state, 'misc');
    expect(single.moved).toEqual([{ name: 'notes', groupId: 'support', role: 'worker' }]);
    expect(deleteGroup(state, 'misc', { moveTo: 'support' }).state.members.find((m) => m.name === 'notes')?.groupId).toBe('support');
    expect(() => deleteGroup(state, 'nope')).toThrow(/Expected `groupId` to name a group/);
    expect(() => deleteGroup(state, 'misc', { moveTo: 'misc' })).toThrow(/moveTo/);
    expect(state.members).toHaveLength(4); // the input is not modified
  });

  it('reconciles without ever moving members of multi-agent groups', () => {
    const state = parseTeamRegistry(fixture(2));
    const result = reconcile(state, [
      { name: 'triage', group: 'misc' }, // moved to misc
      { name: 'lead', group: 'misc' }, // an orchestrator of a multi-agent group: never moved
      { name: 'builder', group: 'support' }, // a member of a multi-agent group: never moved
      { name: 'fresh' }, // added to the single group with the lowest sortOrder
    ]);
    expect(result.changes).toEqual([
      { type: 'moved', name: 'triage', from: 'support', to: 'misc' },
      { type: 'removed', name: 'notes', from: 'misc' },
      { type: 'added', name: 'lead', to: 'misc' },
      { type: 'added', name: 'builder', to: 'support' },
      { type: 'added', name: 'fresh', to: 'support' },
    ]);
    const release = result.state.members.filter((m) => m.groupId === 'release');
    expect(release).toEqual(state.members.filter((m) => m.groupId === 'release'));
    expect(result.unplaced).toEqual([]);
    // Reconciling again changes nothing.
    expect(reconcile(result.state, [{ name: 'triage', group: 'misc' }, { name: 'lead', group: 'misc' }, { name: 'builder', group: 'support' }, { name: 'fresh' }]).changes).toEqual([]);
  });

  it('leaves team-only agents alone and reports agents it cannot place', () => {
    const state = parseTeamRegistry(fixture(2));
    const teamOnly = reconcile(state, [{ name: 'lead' }, { name: 'builder' }, { name: 'triage' }, { name: 'notes' }]);
    expect(teamOnly.changes).toEqual([]);
    const onlyMulti: TeamRegistryState = { ...state, groups: state.groups.filter((g) => g.id === 'release'), members: state.members.filter((m) => m.groupId === 'release') };
    expect(reconcile(onlyMulti, [{ name: 'new' }]).unplaced).toEqual(['new']);
  });

  it('saves and loads through a store; a missing document is an empty registry', async () => {
    const store = memoryStore();
    const registry = teamRegistry(store);
    expect(await registry.load()).toEqual({ state: { schemaVersion: TEAM_REGISTRY_SCHEMA_VERSION, groups: [], members: [] }, found: false });
    const state = parseTeamRegistry(fixture(2));
    await registry.save(state);
    expect((await registry.load()).state).toEqual(state);
    await store.set('team-registry', fixture(1));
    expect(await registry.load()).toMatchObject({ found: true, migratedFrom: 1 });
    await expect(registry.save({ schemaVersion: 2, groups: [{ id: '' }], members: [] } as unknown as TeamRegistryState)).rejects.toThrow(/Invalid team registry/);
  });

  it('moves a corrupted document aside and reports it, never replacing it silently', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-registry-'));
    writeFileSync(join(dir, 'team-registry.json'), '{"schemaVersion":2,"groups":[{"id":');
    const store = fileStore(dir);
    const registry = teamRegistry(store, { clock: new SimulatedClock(1_700_000_000_000) });
    const loaded = await registry.load();
    expect(loaded.corrupt?.movedTo).toBe('team-registry.corrupt-1700000000000');
    expect(loaded.corrupt?.reason).toMatch(/not valid JSON/);
    expect(loaded.state.groups).toEqual([]);
    expect(await store.get('team-registry.corrupt-1700000000000')).toMatchObject({ content: '{"schemaVersion":2,"groups":[{"id":' });
    expect(await store.list('team-registry')).toEqual(['team-registry.corrupt-1700000000000']);

    await store.set('team-registry', { schemaVersion: 2, groups: 'not a list' });
    const invalid = await teamRegistry(store, { clock: new SimulatedClock(5) }).load();
    expect(invalid.corrupt).toMatchObject({ movedTo: 'team-registry.corrupt-5', reason: expect.stringMatching(/is invalid/) });
    expect(await store.get('team-registry.corrupt-5')).toMatchObject({ content: { schemaVersion: 2, groups: 'not a list' } });
  });

  it('refuses a document written by a newer version and leaves it in place', async () => {
    const store = memoryStore();
    await store.set('team-registry', { schemaVersion: TEAM_REGISTRY_SCHEMA_VERSION + 1, groups: [] });
    await expect(teamRegistry(store).load()).rejects.toThrow(/newer/);
    expect(await store.get('team-registry')).toEqual({ schemaVersion: TEAM_REGISTRY_SCHEMA_VERSION + 1, groups: [] });
  });
});
