// Every public function and constructor that takes an options object refuses
// a key it does not know, with `invalid_option` naming it (the recipes in
// ./recipes call each one; test/options/coverage.compile.ts checks that every
// such function of every entry point has a recipe).
import { describe, expect, it } from 'vitest';
import { TroupeError } from '../../src/core/errors.js';
import { recipes } from './recipes/index.js';

describe('an unknown option', () => {
  it.each(Object.keys(recipes))('%s refuses it with invalid_option, naming it', async (name) => {
    let error: unknown;
    try {
      await recipes[name]!({ notAnOption: 1 });
    } catch (e) {
      error = e;
    }
    expect(error, `${name} accepted the unknown option`).toBeInstanceOf(TroupeError);
    expect((error as TroupeError).code).toBe('invalid_option');
    expect((error as TroupeError).message).toMatch(/Unknown option `(?:[\w.]+\.)?notAnOption`/);
  });
});
