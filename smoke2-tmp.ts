import { spawn } from 'node:child_process';
import { a2aAgent } from './src/integrations/a2a/index.js';
import { run } from './src/core/run.js';
async function start(args: string[]) {
  const child = spawn(process.execPath, ['test/fixtures/a2a/sdk-agent.mjs', '--port', '0', '--log', '/tmp/a2a-smoke/sdk2.log', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((r) => child.stdout!.on('data', (d) => r(Number(String(d).split(' ')[1]))));
  return { child, url: `http://127.0.0.1:${port}` };
}
const a = await start([]);
const r = a2aAgent(a.url, { skill: 'review', answer: async () => 'main' });
const ev: string[] = [];
for (const input of ['stream the diff', 'ask me', 'fail now', 'hello']) {
  try { const res = await run(r, input, { onEvent: (e) => e.type.startsWith('a2a') && ev.push(`${e.type}:${'state' in e ? e.state : ''}`) }); console.log(input, '->', res.output, JSON.stringify(res.usage)); }
  catch (e) { console.log(input, '-> ERR', (e as any).reason, (e as Error).message); }
}
console.log(ev.join(' '));
const ctl = new AbortController();
setTimeout(() => ctl.abort(), 500);
try { await run(r, 'slow work', { signal: ctl.signal, onEvent: (e) => e.type === 'a2a.cancelled' && console.log(JSON.stringify(e)) }); } catch (e) { console.log('slow ->', (e as any).code, (e as Error).message); }
try { await run(r, 'die now'); } catch (e) { console.log('die ->', (e as any).reason, (e as Error).message); }
a.child.kill();
for (const lie of ['skills', 'endpoint', 'path']) {
  const b = await start(['--lie', lie]);
  try { await run(a2aAgent(b.url, { skill: 'review' }), 'hello'); } catch (e) { console.log(lie, '->', (e as any).reason, (e as Error).message); }
  b.child.kill();
}
try { await run(a2aAgent('http://127.0.0.1:1'), 'hello'); } catch (e) { console.log('nothing ->', (e as any).reason, (e as Error).message); }
console.log(process.getActiveResourcesInfo());
