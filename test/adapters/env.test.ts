import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { adapterFromEnv, splitCommand } from '../../src/adapters/env.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { run } from '../../src/core/run.js';
import { agent } from '../../src/patterns/agent.js';
import { FakeChatServer } from '../helpers/chat-server.js';
import { mockModel } from '../helpers/mock-language-model.js';

const server = new FakeChatServer();
afterAll(() => server.stop());
const fake = join(import.meta.dirname, '..', 'fixtures', 'cli', 'fake-agent.mjs');

describe('adapterFromEnv', () => {
  it('returns undefined when TROUPE_ADAPTER is unset, empty or scripted', () => {
    expect(adapterFromEnv({})).toBeUndefined();
    expect(adapterFromEnv({ TROUPE_ADAPTER: ' ' })).toBeUndefined();
    expect(adapterFromEnv({ TROUPE_ADAPTER: 'scripted' })).toBeUndefined();
  });

  it('rejects an unknown adapter name', () => {
    expect(() => adapterFromEnv({ TROUPE_ADAPTER: 'gpt' })).toThrow(expect.objectContaining({ code: 'unknown_adapter' }));
  });

  it('builds the openai adapter from OPENAI_BASE_URL, OPENAI_API_KEY and TROUPE_MODEL', async () => {
    const baseURL = await server.start();
    server.requests.length = 0;
    server.handler = () => ({ text: 'hello from the server' });
    const adapter = adapterFromEnv({ TROUPE_ADAPTER: 'openai', OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: 'sk-env', TROUPE_MODEL: 'llama3.2' });
    expect(adapter?.id).toBe('openai');
    const result = await run(agent({ name: 'a', model: 'gpt-4.1' }), 'hi', { adapter: adapter! });
    expect(result.output).toBe('hello from the server');
    expect(server.requests[0]?.body['model']).toBe('llama3.2');
    expect(server.requests[0]?.headers['authorization']).toBe('Bearer sk-env');
  });

  it('builds the ai-sdk adapter with the provider package named by TROUPE_AI_PROVIDER', async () => {
    const imported: string[] = [];
    const models: string[] = [];
    const provider = Object.assign(() => undefined, {
      languageModel: (id: string) => {
        models.push(id);
        return mockModel(() => ({ text: `model ${id}` }));
      },
    });
    const adapter = adapterFromEnv(
      { TROUPE_ADAPTER: 'ai-sdk', TROUPE_AI_PROVIDER: 'anthropic', TROUPE_MODEL: 'claude-x' },
      { importProvider: async (name) => (imported.push(name), { anthropic: provider }) },
    );
    const result = await run(agent({ name: 'a' }), 'hi', { adapter: adapter! });
    expect(result.output).toBe('model claude-x');
    expect(imported).toEqual(['@ai-sdk/anthropic']);
    expect(models).toEqual(['claude-x']);
  });

  it('names the provider package to install when it is missing', async () => {
    const adapter = adapterFromEnv({ TROUPE_ADAPTER: 'ai-sdk', TROUPE_AI_PROVIDER: 'troupe-missing', TROUPE_MODEL: 'm' });
    await expect(adapter!.openSession({ agent: 'a' })).rejects.toMatchObject({
      code: 'missing_dependency',
      message: expect.stringContaining('npm install @ai-sdk/troupe-missing'),
    });
  });

  it('builds the process adapter from TROUPE_COMMAND, TROUPE_COMMAND_OUTPUT and TROUPE_PASS_ENV', async () => {
    const adapter = adapterFromEnv({
      TROUPE_ADAPTER: 'process',
      TROUPE_COMMAND: `"${process.execPath}" '${fake}' --reply='it works' {prompt}`,
      TROUPE_COMMAND_OUTPUT: 'jsonl',
    });
    const turn = await (await adapter!.openSession({ agent: 'a' })).send('hi');
    expect(turn.text).toBe('it works');
    expect(() => adapterFromEnv({ TROUPE_ADAPTER: 'process' })).toThrow(/needs TROUPE_COMMAND/);
    expect(() => adapterFromEnv({ TROUPE_ADAPTER: 'process', TROUPE_COMMAND: 'x', TROUPE_COMMAND_OUTPUT: 'xml' })).toThrow(ConfigurationError);
  });
});

describe('splitCommand', () => {
  it('splits like a shell without running one', () => {
    expect(splitCommand(`claude -p --append-system-prompt 'Be terse.'`)).toEqual(['claude', '-p', '--append-system-prompt', 'Be terse.']);
    expect(splitCommand(`a "b \\"c\\" $HOME" d\\ e ''`)).toEqual(['a', 'b "c" $HOME', 'd e', '']);
    expect(() => splitCommand(`a 'b`)).toThrow(/Unterminated single quote/);
    expect(() => splitCommand('   ')).toThrow(ConfigurationError);
  });

  it('round-trips any argument list quoted with single quotes', () => {
    const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 6 }), (args) => {
        expect(splitCommand(args.map(quote).join(' '))).toEqual(args);
      }),
    );
  });
});
