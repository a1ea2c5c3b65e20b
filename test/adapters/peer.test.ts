import { describe, expect, it } from 'vitest';
import { loadPeer, parseArguments } from '../../src/adapters/peer.js';
import { ConfigurationError } from '../../src/core/errors.js';

describe('loadPeer', () => {
  it('names the package to install when it is missing', async () => {
    const missing = 'troupe-no-such-package';
    const error = await loadPeer(missing, () => import(missing), 'someAdapter').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({ code: 'missing_dependency', details: { package: missing } });
    expect((error as Error).message).toBe(`someAdapter needs the optional package "${missing}": run \`npm install ${missing}\``);
  });

  it('returns the module when it is installed', async () => {
    const mod = await loadPeer('openai', () => import('openai'), 'x');
    expect(typeof mod.default).toBe('function');
  });
});

describe('parseArguments', () => {
  it('parses JSON, treats empty text as no arguments, and keeps broken text raw', () => {
    expect(parseArguments('{"a":1}')).toEqual({ arguments: { a: 1 } });
    expect(parseArguments('')).toEqual({ arguments: {} });
    expect(parseArguments('{"a":')).toEqual({ arguments: undefined, rawArguments: '{"a":' });
  });
});
