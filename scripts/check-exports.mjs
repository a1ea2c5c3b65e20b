#!/usr/bin/env node
// After `npm run build`: every path in package.json `exports` exists, and the
// package loads through both `import` and `require` in plain Node, without
// side effects: loading an entry point adds no signal or exit listener.
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const failures = [];
const subpaths = [];
/** Each check: a script run by its own `node -e`, and what to report when it fails. All run at once, a few at a time. */
const checks = [];
const check = (code, failure) => checks.push({ code, failure });

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
// Exit code 4: the import added listeners (printed on stderr).
const listeners = `const listeners = () => ['SIGTERM', 'SIGINT', 'SIGHUP', 'exit'].map((s) => process.listenerCount(s)).join(',');`;
const unchanged = `if (listeners() !== before) { console.error('listeners before/after: ' + before + ' / ' + listeners()); process.exit(4) }`;
for (const name of names) {
  for (const mode of ['import', 'require']) {
    const code =
      mode === 'import'
        ? `${listeners} const before = listeners(); import(${JSON.stringify(name)}).then((m) => { if (!Object.keys(m).length) process.exit(3); ${unchanged} })`
        : `${listeners} const before = listeners(); const m = require(${JSON.stringify(name)}); if (!Object.keys(m).length) process.exit(3); ${unchanged}`;
    check(code, `${mode}('${name}') failed`);
  }
}

// Integrations load their optional peer on first use (a dynamic import, also in
// the CommonJS build): troupe/redis must reach ioredis, which then fails to
// connect to a closed port with a StoreError, not a missing_dependency error.
for (const mode of ['import', 'require']) {
  const load = mode === 'import' ? `import('troupe/redis')` : `Promise.resolve(require('troupe/redis'))`;
  const code = `${load}.then(async ({ redisStore }) => {
    const store = redisStore({ connection: 'redis://127.0.0.1:1', timeoutMs: 300 });
    const error = await store.get('k').then(() => undefined, (e) => e);
    await store.close();
    if (error?.code !== 'store_error') { console.error(String(error?.code), String(error?.message)); process.exit(4); }
  })`;
  check(code, `${mode}('troupe/redis') could not load ioredis`);
}

// troupe/bullmq loads bullmq (and ioredis) on first use, from both builds: an
// executor pointed at a closed port fails with a QueueError, not missing_dependency.
for (const mode of ['import', 'require']) {
  const load = mode === 'import' ? `import('troupe/bullmq')` : `Promise.resolve(require('troupe/bullmq'))`;
  const code = `${load}.then(async ({ bullmqExecutor }) => {
    const executor = bullmqExecutor({ connection: 'redis://127.0.0.1:1', timeoutMs: 300 });
    const error = await executor.stats().then(() => undefined, (e) => e);
    await executor.close();
    if (error?.code !== 'queue_error') { console.error(String(error?.code), String(error?.message)); process.exit(4); }
  })`;
  check(code, `${mode}('troupe/bullmq') could not load bullmq`);
}

// troupe/mcp loads @modelcontextprotocol/sdk on first use, from both builds:
// a tool server must come up and close.
for (const mode of ['import', 'require']) {
  const load = mode === 'import' ? `import('troupe/mcp')` : `Promise.resolve(require('troupe/mcp'))`;
  const code = `${load}.then(async ({ createToolServer }) => {
    const server = await createToolServer({ tools: [], call: async () => ({ content: '' }) });
    if (typeof server.server.connect !== 'function') process.exit(4);
    await server.close();
  })`;
  check(code, `${mode}('troupe/mcp') could not load @modelcontextprotocol/sdk`);
}

// troupe/a2a loads @a2a-js/sdk on first use, from both builds: the server
// comes up (it loads the SDK's server side), and a remote agent on a closed
// port fails reading its card (after loading the client side).
for (const mode of ['import', 'require']) {
  const load = mode === 'import' ? `import('troupe/a2a')` : `Promise.resolve(require('troupe/a2a'))`;
  const code = `${load}.then(async ({ a2aServer, a2aAgent }) => {
    const store = { get: async () => undefined, set: async () => {}, delete: async () => {}, list: async () => [], append: async () => {}, read: async () => ({ records: [], next: 0 }), getVersioned: async () => undefined, setIf: async () => ({ ok: true, version: '1' }) };
    const server = await a2aServer({ start: () => {}, store, authorize: () => ({ tenant: 't' }) });
    if (server.card().supportedInterfaces[0].protocolVersion !== '1.0') process.exit(4);
    await server.close();
    const error = await a2aAgent('http://127.0.0.1:9/').card().then(() => undefined, (e) => e);
    if (error?.code !== 'remote_agent') { console.error(String(error?.code), String(error?.message)); process.exit(4); }
  })`;
  check(code, `${mode}('troupe/a2a') could not load @a2a-js/sdk`);
}

const run = promisify(execFile);
let next = 0;
async function worker() {
  while (next < checks.length) {
    const { code, failure } = checks[next++];
    try {
      await run(process.execPath, ['-e', code], { cwd: root });
    } catch (error) {
      failures.push(`${failure}: ${String(error.stderr || error.message).split('\n').slice(0, 4).join(' ')}`);
    }
  }
}
await Promise.all(Array.from({ length: availableParallelism() + 1 }, worker));

if (failures.length) {
  console.error(`check:exports failed:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log(`check:exports ok: ${names.length} entry points load through import and require, with no signal or exit listener added (${names.join(', ')}); troupe/redis loads ioredis, troupe/bullmq bullmq, troupe/mcp the MCP SDK and troupe/a2a the A2A SDK in both`);
