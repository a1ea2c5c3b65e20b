/**
 * What a coding-agent CLI sends its model per call besides the task
 * (`npm run bench -- cli-overhead`): each real CLI of `test/cli-rigs`
 * (Claude Code, Codex, Copilot; `npm run install:cli-rigs`) runs one turn
 * of an agent through `processAdapter` and its profile, offline, against
 * the local mock of its model API (Anthropic Messages for Claude Code and
 * Copilot, OpenAI Responses for Codex), which records the request. For
 * each request: the characters of the system prompt (Codex: its
 * instructions and developer messages), of the tool schemas, and of the
 * messages, and about a quarter of their sum in tokens. The overhead is
 * what the call carries besides the agent's own system prompt and the
 * user's input.
 *
 * Rows: the CLI's defaults (every tool of the CLI: `defaultCliTools:
 * 'all'`, as troupe's profiles offered before), an agent that names none
 * of the CLI's tools and one that names read, edit and shell, each with
 * its system prompt appended to the CLI's and replacing it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeCodeProfile, codexProfile, copilotProfile, processAdapter, type CliProfileOptions, type ProcessAdapterOptions } from '../src/adapters/process.js';
import { run } from '../src/core/run.js';
import { agent, type AgentCliOptions } from '../src/patterns/agent.js';
import { COPILOT_CACHE_HOME, findClis, type RigCli } from '../test/helpers/cli-rigs.js';
import { startMockAnthropic } from '../test/helpers/mock-anthropic.js';
import { startMockResponses } from '../test/helpers/mock-responses.js';

const SYSTEM = 'You are a careful software engineer on this repository. Answer briefly.';
const INPUT = 'Say hello.';

/** One measured request. */
interface Sizes {
  system: number;
  tools: number;
  toolCount: number;
  messages: number;
}

interface Row {
  label: string;
  profile: CliProfileOptions;
  cli?: AgentCliOptions;
  goal?: (s: Sizes, overheadTokens: number) => string;
}

const READ_EDIT_SHELL = ['read', 'edit', 'execute'];

const rows: Row[] = [
  { label: 'CLI defaults: every tool (before)', profile: { defaultCliTools: 'all' } },
  { label: 'no CLI tools, append', profile: {}, goal: (s) => (s.tools <= 2 ? 'no tool schemas: the CLI\'s prompt alone ✓' : 'tools offered ✗') },
  { label: 'no CLI tools, replace', profile: {}, cli: { systemPrompt: 'replace' }, goal: (_s, t) => `≤ 1,000 ${t <= 1000 ? '✓' : '✗'}` },
  { label: 'read + edit + shell, append', profile: {}, cli: { tools: READ_EDIT_SHELL }, goal: (_s, t) => `≤ 8,000 ${t <= 8000 ? '✓' : '✗'}` },
  { label: 'read + edit + shell, replace', profile: {}, cli: { tools: READ_EDIT_SHELL, systemPrompt: 'replace' }, goal: (_s, t) => `≤ 8,000 ${t <= 8000 ? '✓' : '✗'}` },
];

/** A CLI of the rig, its mock, and how to read a request. */
interface Rig {
  name: string;
  cli: RigCli;
  /** One turn of an agent with `profile` and `cli`; the sizes of the one request it made. */
  measure(profile: CliProfileOptions, cli: AgentCliOptions | undefined): Promise<Sizes>;
}

const textLength = (value: unknown): number =>
  typeof value === 'string' ? value.length : Array.isArray(value) ? value.reduce((n: number, b: { text?: string }) => n + (b?.text?.length ?? 0), 0) : 0;

async function turn(options: ProcessAdapterOptions, cli: AgentCliOptions | undefined): Promise<void> {
  const adapter = processAdapter(options);
  await run(agent({ name: 'engineer', adapter, system: SYSTEM, ...(cli ? { cli } : {}) }), INPUT);
}

function claudeRig(cli: RigCli, temp: () => string): Rig {
  return {
    name: `Claude Code ${cli.version.split(' ')[0]}`,
    cli,
    async measure(profile, agentCli) {
      const mock = await startMockAnthropic([{ text: 'Hello.' }], { turns: 'all' });
      try {
        await turn(
          {
            ...claudeCodeProfile({ ...profile, command: cli.path }),
            cwd: temp(),
            passEnv: ['PATH'],
            env: { HOME: temp(), ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: 'bench', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1' },
          },
          agentCli,
        );
        return anthropicSizes(mock.messages[0]?.body);
      } finally {
        await mock.close();
      }
    },
  };
}

function copilotRig(cli: RigCli, temp: () => string): Rig {
  return {
    name: `Copilot CLI ${cli.version.match(/\d+\.\d+\.\d+/)?.[0] ?? cli.version}`,
    cli,
    async measure(profile, agentCli) {
      const mock = await startMockAnthropic([{ text: 'Hello.' }], { turns: 'all' });
      const home = temp();
      try {
        await turn(
          {
            ...copilotProfile({ ...profile, command: cli.path }),
            cwd: temp(),
            passEnv: ['PATH'],
            env: {
              HOME: home, COPILOT_HOME: home, COPILOT_CACHE_HOME, COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_TYPE: 'anthropic',
              COPILOT_PROVIDER_BASE_URL: mock.url, COPILOT_PROVIDER_API_KEY: 'bench', COPILOT_MODEL: 'claude-sonnet-4',
            },
          },
          agentCli,
        );
        return anthropicSizes(mock.messages[0]?.body);
      } finally {
        await mock.close();
      }
    },
  };
}

function codexRig(cli: RigCli, temp: () => string): Rig {
  return {
    name: `Codex ${cli.version.split(' ').at(-1)}`,
    cli,
    async measure(profile, agentCli) {
      const mock = await startMockResponses([{ text: 'Hello.' }]);
      const home = temp();
      writeFileSync(
        join(home, 'config.toml'),
        ['model = "mock-model"', 'model_provider = "mock"', '[model_providers.mock]', 'name = "mock"', `base_url = "${mock.url}"`, 'wire_api = "responses"', 'env_key = "TROUPE_MOCK_KEY"', ''].join('\n'),
      );
      try {
        await turn(
          { ...codexProfile({ ...profile, command: cli.path, args: ['--skip-git-repo-check'] }), cwd: temp(), passEnv: ['PATH'], env: { HOME: home, CODEX_HOME: home, TROUPE_MOCK_KEY: 'bench' } },
          agentCli,
        );
        const body = mock.turns[0];
        if (!body) throw new Error('Codex sent no request');
        const input = body.input ?? [];
        const developer = input.filter((i) => i.role === 'developer' || i.role === 'system');
        const instructions = typeof body['instructions'] === 'string' ? body['instructions'].length : 0;
        return {
          system: instructions + developer.reduce((n, i) => n + textLength(i['content']), 0),
          tools: JSON.stringify(body.tools ?? []).length,
          toolCount: (body.tools ?? []).reduce((n, t) => n + (t.tools?.length ?? 1), 0),
          messages: JSON.stringify(input.filter((i) => !developer.includes(i))).length,
        };
      } finally {
        await mock.close();
      }
    },
  };
}

function anthropicSizes(body: { tools?: unknown[]; messages?: unknown; [key: string]: unknown } | undefined): Sizes {
  if (!body) throw new Error('the CLI sent no request');
  return { system: textLength(body['system']), tools: JSON.stringify(body.tools ?? []).length, toolCount: body.tools?.length ?? 0, messages: JSON.stringify(body.messages ?? []).length };
}

const fmt = (n: number) => n.toLocaleString('en-US');

export default async function cliOverheadBench(): Promise<void> {
  const clis = findClis();
  const folders: string[] = [];
  const temp = () => {
    const folder = mkdtempSync(join(tmpdir(), 'troupe-cli-bench-'));
    folders.push(folder);
    return folder;
  };
  const rigs = [clis.claude && claudeRig(clis.claude, temp), clis.codex && codexRig(clis.codex, temp), clis.copilot && copilotRig(clis.copilot, temp)].filter((r): r is Rig => Boolean(r));
  const missing = Object.entries(clis).filter(([, c]) => c === null).map(([n]) => n);
  if (missing.length > 0) console.log(`Skipped ${missing.join(', ')}: not installed (\`npm run install:cli-rigs\`).\n`);
  if (rigs.length === 0) return;
  console.log(`Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()[0]!.toFixed(1)}; git ${gitHead()}.`);
  console.log(`Agent: system prompt of ${SYSTEM.length} characters, input "${INPUT}" (${INPUT.length}); tokens ≈ characters / 4; overhead = everything but the agent's system prompt and input.\n`);
  console.log('| CLI | agent | system prompt chars | tool schemas chars (tools) | messages chars | ≈ tokens per call | ≈ overhead tokens | goal |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |');
  try {
    for (const rig of rigs) {
      for (const row of rows) {
        if (rig.name.startsWith('Copilot') && row.cli?.systemPrompt === 'replace') {
          console.log(`| ${rig.name} | ${row.label} | – | – | – | – | – | Copilot CLI cannot replace its prompt: as append |`);
          continue;
        }
        try {
          const s = await rig.measure(row.profile, row.cli);
          const total = s.system + s.tools + s.messages;
          const tokens = Math.round(total / 4);
          const overhead = Math.round(Math.max(0, total - SYSTEM.length - INPUT.length) / 4);
          console.log(`| ${rig.name} | ${row.label} | ${fmt(s.system)} | ${fmt(s.tools)} (${s.toolCount}) | ${fmt(s.messages)} | ${fmt(tokens)} | ${fmt(overhead)} | ${row.goal?.(s, overhead) ?? ''} |`);
        } catch (error) {
          console.log(`| ${rig.name} | ${row.label} | failed: ${String(error).split('\n')[0]} | | | | | |`);
        }
      }
    }
  } finally {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}

function gitHead(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', cwd: import.meta.dirname }).trim();
  } catch {
    return 'unknown';
  }
}
