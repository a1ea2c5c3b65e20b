import { describe, expect, it } from 'vitest';
import { scriptedAdapter } from '../../src/adapters/scripted.js';
import { SimulatedClock } from '../../src/core/clock.js';
import type { TroupeEvent } from '../../src/core/events.js';
import { run } from '../../src/core/run.js';
import { LoopControl } from '../../src/core/control.js';
import { fromPreset } from '../../src/squad/from-preset.js';
import { checkPresetModels } from '../../src/squad/preset-models.js';
import type { TeamPreset } from '../../src/squad/preset.js';

const preset: TeamPreset = {
  name: 'pair',
  mode: 'sequential',
  source: 'user',
  workers: [
    { name: 'writer', systemPrompt: 'You write.', model: 'gpt-known' },
    { name: 'editor', systemPrompt: 'You edit.', model: 'gpt-typo' },
    { name: 'critic', systemPrompt: 'You criticise.' },
  ],
};

function modelsOpened(adapter: ReturnType<typeof scriptedAdapter>): Record<string, string> {
  return Object.fromEntries(adapter.sessions.map((s) => [s.agent, s.model ?? '(default)']));
}

describe('checkPresetModels', () => {
  it('replaces a model the adapter does not list with the configured default, once per adapter listing', async () => {
    let listings = 0;
    const adapter = scriptedAdapter({ models: ['gpt-known', 'gpt-small'] });
    const counted = { ...adapter, listModels: (o?: { signal?: AbortSignal }) => (listings++, adapter.listModels!(o)) };
    const { preset: checked, unknown } = await checkPresetModels({ ...preset, workers: [...preset.workers, { name: 'x', systemPrompt: '', model: 'nope' }] }, { adapter: counted, model: 'gpt-small' });
    expect(unknown).toEqual([
      { worker: 'editor', model: 'gpt-typo', adapter: 'scripted', fallback: 'gpt-small', listed: 2 },
      { worker: 'x', model: 'nope', adapter: 'scripted', fallback: 'gpt-small', listed: 2 },
    ]);
    expect(checked.workers.map((w) => w.model)).toEqual(['gpt-known', 'gpt-small', undefined, 'gpt-small']);
    expect(listings).toBe(1);
  });

  it('removes the model (the adapter default) without a configured default, and trusts adapters that cannot list', async () => {
    const { preset: checked } = await checkPresetModels(preset, { adapter: scriptedAdapter({ models: ['gpt-known'] }) });
    expect(checked.workers[1]).toEqual({ name: 'editor', systemPrompt: 'You edit.' });
    const trusted = await checkPresetModels(preset, { adapter: scriptedAdapter() });
    expect(trusted).toEqual({ preset, unknown: [] });
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(checkPresetModels(preset, { adapter: scriptedAdapter({ models: [] }), signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
  });
});

describe('fromPreset with an adapter that lists its models', () => {
  it('runs an unknown model on the configured default and says so in a warning event', async () => {
    const adapter = scriptedAdapter({ models: ['gpt-known', 'gpt-small'], clock: new SimulatedClock(), fallback: 'ok' });
    const events: TroupeEvent[] = [];
    const team = fromPreset(preset, { model: 'gpt-small' });
    await run(team, 'Write a haiku.', { adapter, onEvent: (e) => events.push(e) });
    expect(modelsOpened(adapter)).toEqual({ writer: 'gpt-known', editor: 'gpt-small', critic: 'gpt-small' });
    const warnings = events.filter((e): e is TroupeEvent<'warning'> => e.type === 'warning' && e.code === 'unknown_model');
    expect(warnings.map((w) => w.message)).toEqual(['Preset "pair": worker "editor" names model "gpt-typo", which adapter "scripted" does not list (2 models); using "gpt-small"']);
    // A second run reuses the corrected team and warns again.
    await run(team, 'Another one.', { adapter, onEvent: (e) => events.push(e) });
    expect(events.filter((e) => e.type === 'warning' && e.code === 'unknown_model')).toHaveLength(2);
  });

  it("falls back to the adapter's default without a configured model; changes nothing when every name is listed or the adapter cannot list", async () => {
    const listing = scriptedAdapter({ models: ['gpt-known'], fallback: 'ok' });
    await run(fromPreset(preset), 'Go.', { adapter: listing });
    expect(modelsOpened(listing)).toEqual({ writer: 'gpt-known', editor: '(default)', critic: '(default)' });

    const silent = scriptedAdapter({ fallback: 'ok' });
    const events: TroupeEvent[] = [];
    await run(fromPreset(preset), 'Go.', { adapter: silent, onEvent: (e) => events.push(e) });
    expect(modelsOpened(silent)).toEqual({ writer: 'gpt-known', editor: 'gpt-typo', critic: '(default)' });
    expect(events.some((e) => e.type === 'warning')).toBe(false);
  });

  it('checks a worker that names an adapter against that adapter', async () => {
    const main = scriptedAdapter({ fallback: 'ok' });
    const local = scriptedAdapter({ id: 'local', models: ['llama'], fallback: 'ok' });
    const team = fromPreset({ ...preset, workers: [{ name: 'writer', systemPrompt: 'w', model: 'gpt-known', adapter: 'local' }] });
    const events: TroupeEvent[] = [];
    await run(team, 'Go.', { adapter: main, adapters: { local }, onEvent: (e) => events.push(e) });
    expect(local.sessions.map((s) => s.model)).toEqual([undefined]);
    expect(events.find((e) => e.type === 'warning')).toMatchObject({ code: 'unknown_model', data: { worker: 'writer', adapter: 'local' } });
  });

  it("is paused through its run's control, whichever variant runs", async () => {
    const team = fromPreset(preset);
    const adapter = scriptedAdapter({ models: ['gpt-known'], fallback: 'ok' });
    const control = new LoopControl();
    control.pause();
    const result = await run(team, 'Go.', { adapter, control });
    expect(result.status).toBe('paused');
    expect(adapter.calls).toHaveLength(0);
    expect(team.preset.name).toBe('pair');
  });
});
