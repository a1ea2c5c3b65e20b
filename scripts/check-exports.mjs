#!/usr/bin/env node
// After `npm run build`: every path in package.json `exports` exists, and the
// package loads through both `import` and `require` in plain Node, without
// side effects: loading an entry point adds no signal or exit listener.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const failures = [];
const subpaths = [];

function targets(value, out = []) {
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) targets(v, out);
  return out;
}

for (const [subpath, value] of Object.entries(pkg.exports)) {
  for (const target of targets(value)) {
    if (!target.includes('*')) {
      if (!existsSync(join(root, target))) failures.push(`${subpath}: ${target} is missing`);
      continue;
    }
    // A wildcard: every file that matches must have its siblings for every condition.
    const dir = join(root, dirname(target));
    const suffix = target.slice(target.indexOf('*') + 1);
    const names = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(suffix)).map((f) => f.slice(0, -suffix.length)) : [];
    if (names.length === 0) failures.push(`${subpath}: nothing matches ${target}`);
    for (const name of names) {
      for (const t of targets(value)) {
        const path = join(root, t.replace('*', name));
        if (!existsSync(path)) failures.push(`${subpath.replace('*', name)}: ${t.replace('*', name)} is missing`);
      }
      const sp = subpath.replace('*', name);
      if (!subpaths.includes(sp)) subpaths.push(sp);
    }
  }
  if (!subpath.includes('*') && subpath !== './package.json') subpaths.push(subpath);
}

const names = subpaths.map((sp) => (sp === '.' ? pkg.name : `${pkg.name}/${sp.slice(2)}`));

/**
 * The checks of one mode (`import` or `require`), run one after the other
 * in one `node -e` of that mode: each entry point loads, exports something
 * and adds no signal or exit listener as it loads (a module shared by two
 * entry points is checked with the first); then each integration reaches
 * its optional peer. The script prints the failures as JSON.
 */
function script(mode) {
  const load = (name) => (mode === 'import' ? `import(${JSON.stringify(name)})` : `Promise.resolve(require(${JSON.stringify(name)}))`);
  const steps = [];
  const step = (failure, body) => steps.push(`await step(${JSON.stringify(failure)}, async () => { ${body} });`);
  for (const name of names) {
    step(
      `${mode}('${name}') failed`,
      `const before = listeners(); const m = await ${load(name)}; if (!Object.keys(m).length) throw new Error('it exports nothing'); if (listeners() !== before) throw new Error('listeners before/after: ' + before + ' / ' + listeners());`,
    );
  }
  // Integrations load their optional peer on first use (a dynamic import, also
  // in the CommonJS build): troupe/redis must reach ioredis, which then fails to
  // connect to a closed port with a StoreError, not a missing_dependency error.
  step(
    `${mode}('troupe/redis') could not load ioredis`,
    `const { redisStore } = await ${load('troupe/redis')};
    const store = redisStore({ connection: 'redis://127.0.0.1:1', timeoutMs: 300 });
    const error = await store.get('k').then(() => undefined, (e) => e);
    await store.close();
    if (error?.code !== 'store_error') throw new Error(String(error?.code) + ' ' + String(error?.message));`,
  );
  // troupe/bullmq loads bullmq (and ioredis) on first use, from both builds: an
  // executor pointed at a closed port fails with a QueueError, not missing_dependency.
  step(
    `${mode}('troupe/bullmq') could not load bullmq`,
    `const { bullmqExecutor } = await ${load('troupe/bullmq')};
    const executor = bullmqExecutor({ connection: 'redis://127.0.0.1:1', timeoutMs: 300 });
    const error = await executor.stats().then(() => undefined, (e) => e);
    await executor.close();
    if (error?.code !== 'queue_error') throw new Error(String(error?.code) + ' ' + String(error?.message));`,
  );
  // troupe/mcp loads @modelcontextprotocol/sdk on first use, from both builds:
  // a tool server must come up and close.
  step(
    `${mode}('troupe/mcp') could not load @modelcontextprotocol/sdk`,
    `const { createToolServer } = await ${load('troupe/mcp')};
    const server = await createToolServer({ tools: [], call: async () => ({ content: '' }) });
    if (typeof server.server.connect !== 'function') throw new Error('no MCP server');
    await server.close();`,
  );
  // troupe/a2a loads @a2a-js/sdk on first use, from both builds: the server
  // comes up (it loads the SDK's server side), and a remote agent on a closed
  // port fails reading its card (after loading the client side).
  step(
    `${mode}('troupe/a2a') could not load @a2a-js/sdk`,
    `const { a2aServer, a2aAgent } = await ${load('troupe/a2a')};
    const store = { get: async () => undefined, set: async () => {}, delete: async () => {}, list: async () => [], append: async () => {}, read: async () => ({ records: [], next: 0 }), getVersioned: async () => undefined, setIf: async () => ({ ok: true, version: '1' }) };
    const server = await a2aServer({ start: () => {}, store, authorize: () => ({ tenant: 't' }) });
    if (server.card().supportedInterfaces[0].protocolVersion !== '1.0') throw new Error('protocol version ' + server.card().supportedInterfaces[0].protocolVersion);
    await server.close();
    const error = await a2aAgent('http://127.0.0.1:9/').card().then(() => undefined, (e) => e);
    if (error?.code !== 'remote_agent') throw new Error(String(error?.code) + ' ' + String(error?.message));`,
  );
  return `const listeners = () => ['SIGTERM', 'SIGINT', 'SIGHUP', 'exit'].map((s) => process.listenerCount(s)).join(',');
const failures = [];
async function step(failure, fn) {
  try { await fn(); } catch (error) { failures.push(failure + ': ' + String(error?.stack ?? error).split('\\n').slice(0, 4).join(' ')); }
}
(async () => {
${steps.join('\n')}
process.stdout.write(JSON.stringify(failures), () => process.exit(0));
})();`;
}

// The two modes at once, each in a process of its own.
const run = promisify(execFile);
await Promise.all(
  ['import', 'require'].map(async (mode) => {
    try {
      const { stdout } = await run(process.execPath, ['-e', script(mode)], { cwd: root });
      failures.push(...JSON.parse(stdout));
    } catch (error) {
      failures.push(`the ${mode} checks did not finish: ${String(error.stderr || error.message).split('\n').slice(0, 4).join(' ')}`);
    }
  }),
);

if (failures.length) {
  console.error(`check:exports failed:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log(`check:exports ok: ${names.length} entry points load through import and require, with no signal or exit listener added (${names.join(', ')}); troupe/redis loads ioredis, troupe/bullmq bullmq, troupe/mcp the MCP SDK and troupe/a2a the A2A SDK in both`);
