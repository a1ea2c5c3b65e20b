import { describe, expect, it } from 'vitest';
import { defaultRoles, resolveRole } from '../../../src/plan/model/roles.js';
import { chunkRoles } from '../../../src/plan/model/plan.js';

describe('roles', () => {
  it('has a built-in configuration for every role', () => {
    for (const role of chunkRoles) expect(defaultRoles[role].system.length).toBeGreaterThan(20);
  });
  it('merges overrides over the defaults field by field', () => {
    const merged = resolveRole('Testing', { Testing: { model: 'small', temperature: 0, preferredTools: ['vitest'] }, Generic: { model: 'other' } });
    expect(merged).toEqual({ system: defaultRoles.Testing.system, model: 'small', temperature: 0, preferredTools: ['vitest'] });
    expect(resolveRole('Testing')).toEqual({ ...defaultRoles.Testing, preferredTools: [...defaultRoles.Testing.preferredTools] });
    merged.preferredTools.push('x');
    expect(defaultRoles.Testing.preferredTools).not.toContain('x');
  });
});
