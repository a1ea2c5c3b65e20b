// Every exported function and constructor that takes an options object
// (found by the compiler in every entry point: scripts/public-api.ts) has a
// recipe in ./recipes, so test/options/unknown-keys.test.ts checks that it
// refuses an unknown key. Error classes are left out: their options are the
// error's cause and details, for troupe's own use.
import { describe, expect, it } from 'vitest';
import { functionsTakingOptions } from '../../scripts/public-api.js';
import { sharedPublicApi } from '../helpers/compiler.js';
import { recipes } from './recipes/index.js';

/**
 * Functions still to describe their options (docs/conventions.md, "Options"):
 * each moves to a recipe once it checks them. Empty when every one does.
 */
const pending = new Set<string>([]);

describe('options of the public API', () => {
  it('every function and constructor that takes options has a recipe (or is still pending)', { timeout: 120_000 }, () => {
    const found = [...functionsTakingOptions(sharedPublicApi()).keys()].filter((name) => !name.endsWith('Error'));
    expect(found.filter((name) => !(name in recipes) && !pending.has(name))).toEqual([]);
    expect([...pending].filter((name) => name in recipes), 'pending names that have a recipe now').toEqual([]);
    expect([...pending].filter((name) => !found.includes(name)), 'pending names that are no longer public').toEqual([]);
  });
});
