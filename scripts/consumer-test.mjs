#!/usr/bin/env node
// After `npm run build`: the package as a user gets it. Packs troupe, installs
// the tarball into a fresh project that has only zod besides it (no vitest,
// no TypeScript: the checker comes from this repository), then
// - type-checks the README's Usage snippet strictly (module nodenext), as an
//   ES module and as CommonJS, against the packed declarations;
// - runs both and checks they print what the README says;
// - type-checks and loads every subpath of the exports map that needs no optional peer, ESM and CommonJS;
// - type-checks a listener of the root's `TroupeEvent` that reads events of every layer;
// - type-checks troupe/adapters/env without its optional peers (`ai`, `openai`) installed;
// - checks that the package ships no source maps;
// - runs storeSuite from the packed troupe/testing under node:test;
// - bundles `import 'troupe/ui'` for the browser, which must resolve to the custom elements.
// Offline: npm installs from its cache (`--prefer-offline`), which `npm ci`
// has filled with every dependency.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = require.resolve('typescript/bin/tsc');
const step = (text) => console.log(`consumer: ${text}`);
const run = (file, args, cwd) => execFileSync(file, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' && file === npm });
/** `run` without blocking, for commands that may run at once; rejects with the same `stdout` and `stderr` on failure. */
const runAsync = (file, args, cwd) => promisify(execFile)(file, args, { cwd, encoding: 'utf8' });

/** The first ```ts block of the README's `## Usage` section, and what it says it prints. */
function usageSnippet() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Usage\n'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('README.md has no ```ts block under ## Usage');
  const printed = /console\.log\(result\.output\);\s*\/\/\s*"([^"]*)"/.exec(code)?.[1];
  if (!printed) throw new Error('The Usage snippet no longer says what `result.output` prints (a `// "..."` comment)');
  return { code, printed };
}

/** The snippet as CommonJS: the imports stay (compiled to require), the rest runs in an async function. */
function asCommonJs(code) {
  const lines = code.split('\n');
  const imports = lines.filter((l) => l.startsWith('import '));
  const body = lines.filter((l) => !l.startsWith('import '));
  return `${imports.join('\n')}\n\nasync function main(): Promise<void> {\n${body.map((l) => (l ? `  ${l}` : l)).join('\n')}\n}\n\nmain().catch((error: unknown) => {\n  console.error(error);\n  process.exitCode = 1;\n});\n`;
}

const work = mkdtempSync(join(tmpdir(), 'troupe-consumer-'));
try {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  step(`packing ${pkg.name}@${pkg.version}`);
  const [packed] = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', work], root));
  const tarball = join(work, packed.filename);
  const maps = packed.files.filter((f) => f.path.endsWith('.map'));
  if (maps.length > 0) throw new Error(`the package ships ${maps.length} source maps (${maps[0].path}, ...)`);
  step(`${packed.entryCount} files, ${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked, no source maps`);

  const project = join(work, 'app');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'troupe-consumer', version: '1.0.0', private: true }, null, 2));
  const zod = JSON.parse(readFileSync(require.resolve('zod/package.json'), 'utf8')).version;
  step(`installing the tarball and zod@${zod} (from the npm cache)`);
  run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, `zod@${zod}`], project);
  try {
    createRequire(join(project, 'package.json')).resolve('vitest');
    throw new Error('vitest is installed in the consumer project: the check that troupe/testing needs no test runner would prove nothing');
  } catch (error) {
    if (error.code !== 'MODULE_NOT_FOUND') throw error;
  }

  const { code, printed } = usageSnippet();
  writeFileSync(join(project, 'usage.mts'), code);
  writeFileSync(join(project, 'usage.cts'), asCommonJs(code));
  // Every subpath of the exports map (one adapter for the wildcard) but the integrations on optional peers
  // this project does not install (check:exports loads those): it type-checks and loads.
  const needsPeer = ['./redis', './bullmq', './otel', './mcp', './a2a', './package.json'];
  const subpaths = Object.keys(pkg.exports)
    .filter((sp) => !needsPeer.includes(sp))
    .map((sp) => (sp === '.' ? pkg.name : `${pkg.name}/${sp.slice(2).replace('*', 'scripted')}`));
  const load = subpaths.map((name, i) => `import * as m${i} from '${name}';`).join('\n');
  const check = `const loaded = [${subpaths.map((_, i) => `m${i}`).join(', ')}].map((m) => Object.keys(m).length);\nif (loaded.some((n) => n === 0)) throw new Error('an entry point exports nothing: ' + loaded.join(','));\nconsole.log(loaded.length + ' entry points');\n`;
  writeFileSync(join(project, 'subpaths.mts'), `${load}\n${check}`);
  writeFileSync(join(project, 'subpaths.cts'), `${load}\n${check}`);
  // The event map from the root alone knows every layer's events (each layer merges its own into it).
  const events = `import type { TroupeEvent } from 'troupe';
export function describeEvent(e: TroupeEvent): string {
  switch (e.type) {
    case 'op.started': return e.path ?? '';
    case 'team.vote': return \`\${e.member} \${e.vote}\`;
    case 'chunk.status': return \`\${e.chunkId} \${e.previous} -> \${e.status}\`;
    case 'coord.task': return \`\${e.task} \${e.to}\`;
    default: return e.type;
  }
}
`;
  writeFileSync(join(project, 'events.mts'), events);
  // troupe/adapters/env's public types need no optional peer (this project installs neither ai nor openai).
  writeFileSync(
    join(project, 'env.mts'),
    `import { adapterFromEnv, type AdapterFromEnvOptions } from 'troupe/adapters/env';\nconst options: AdapterFromEnvOptions = { openai: { baseURL: 'http://localhost:11434/v1' }, aiSdk: { defaultModel: 'm' } };\nexport const adapter = adapterFromEnv({}, options);\n`,
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
          outDir: 'out',
        },
        files: ['usage.mts', 'usage.cts', 'subpaths.mts', 'subpaths.cts', 'env.mts'],
      },
      null,
      2,
    ),
  );
  // Two programs, compiled at once: the Usage snippet and the entry points, and a listener of the event map with only the root imported.
  step('type-checking the Usage snippet (strict, nodenext, ESM and CommonJS) against the packed declarations, and a listener of the event map with only the root imported');
  const base = JSON.parse(readFileSync(join(project, 'tsconfig.json'), 'utf8'));
  writeFileSync(join(project, 'tsconfig.events.json'), JSON.stringify({ compilerOptions: { ...base.compilerOptions, noEmit: true }, files: ['events.mts'] }, null, 2));
  await Promise.all(['tsconfig.json', 'tsconfig.events.json'].map((config) => runAsync(process.execPath, [tsc, '-p', config], project)));

  for (const file of ['out/usage.mjs', 'out/usage.cjs']) {
    step(`running ${file}`);
    const out = run(process.execPath, [file], project);
    const first = out.split('\n')[0];
    if (first !== printed) throw new Error(`${file} printed ${JSON.stringify(first)} first; the README says ${JSON.stringify(printed)}`);
  }

  for (const file of ['out/subpaths.mjs', 'out/subpaths.cjs']) {
    step(`running ${file}`);
    const out = run(process.execPath, [file], project).trim();
    if (out !== `${subpaths.length} entry points`) throw new Error(`${file} printed ${JSON.stringify(out)}`);
  }

  // troupe/otel loads without its optional peer, and otelTracing() then names the package to install.
  const otelCheck = (load) =>
    `${load}\ntry { otelTracing(); console.log('no error'); } catch (e) { console.log(e.code + ': ' + e.message); }\n`;
  writeFileSync(join(project, 'otel.mjs'), otelCheck("import { otelTracing } from 'troupe/otel';"));
  writeFileSync(join(project, 'otel.cjs'), otelCheck("const { otelTracing } = require('troupe/otel');"));
  for (const file of ['otel.mjs', 'otel.cjs']) {
    step(`running ${file} (troupe/otel without @opentelemetry/api)`);
    const out = run(process.execPath, [file], project).trim();
    const expected = 'missing_dependency: otelTracing needs the optional package "@opentelemetry/api": run `npm install @opentelemetry/api`';
    if (out !== expected) throw new Error(`${file} printed ${JSON.stringify(out)}, not ${JSON.stringify(expected)}`);
  }

  // A bundler for the browser resolves troupe/ui to the elements (the `browser` condition), which define themselves.
  step('bundling `import \'troupe/ui\'` for the browser (esbuild)');
  writeFileSync(join(project, 'page.mjs'), "import 'troupe/ui';\n");
  const { build } = await import('esbuild');
  const bundled = await build({ entryPoints: [join(project, 'page.mjs')], absWorkingDir: project, bundle: true, write: false, platform: 'browser', format: 'esm', logLevel: 'silent' });
  const browserCode = bundled.outputFiles[0].text;
  if (!browserCode.includes('troupe-team-chat') || !browserCode.includes('customElements')) throw new Error('troupe/ui did not resolve to the custom elements in a browser bundle');

  step('running storeSuite from troupe/testing under node:test');
  writeFileSync(
    join(project, 'store.test.mjs'),
    `import { describe, it } from 'node:test';\nimport { memoryStore, storeSuite } from 'troupe/testing';\nstoreSuite('memoryStore', () => memoryStore(), { runner: { describe, it } });\n`,
  );
  const tap = run(process.execPath, ['--test', '--test-reporter=tap', 'store.test.mjs'], project);
  const passed = Number(/^# pass (\d+)$/m.exec(tap)?.[1] ?? 0);
  if (!/^# fail 0$/m.test(tap) || passed === 0) throw new Error(`storeSuite under node:test did not pass:\n${tap}`);

  console.log(`consumer test ok: ${packed.filename} installs with zod alone; the README's Usage and an import of every entry point type-check and run as ESM and CommonJS; troupe/testing runs ${passed} store tests under node:test without vitest; a browser bundle of troupe/ui holds the custom elements`);
} catch (error) {
  const detail = [error.stdout, error.stderr].filter(Boolean).join('\n');
  console.error(`consumer test failed: ${error.message}${detail ? `\n${detail}` : ''}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
