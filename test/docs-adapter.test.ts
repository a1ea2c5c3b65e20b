// The adapter docs/adapters.md teaches (httpChatAdapter) is run through the
// conformance suite exactly as the page shows: its two snippets (the adapter,
// then adapterSuite with its fake endpoint) are written out as one module
// and loaded here, so a reader who copies them gets an adapter that passes.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const page = readFileSync(join(root, 'docs', 'adapters.md'), 'utf8');
const blocks = [...page.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
const adapter = blocks.find((b) => b.includes('export function httpChatAdapter'));
const suite = blocks.find((b) => b.includes("adapterSuite('http-chat'"));
if (adapter === undefined || suite === undefined) throw new Error('docs/adapters.md no longer shows httpChatAdapter and its adapterSuite snippet');
const dir = join(root, 'test', '.generated');
mkdirSync(dir, { recursive: true });
const file = join(dir, 'docs-http-chat-adapter.ts');
writeFileSync(file, `// Written by test/docs-adapter.test.ts from docs/adapters.md.\n${adapter}\n${suite}`);
await import(file);
