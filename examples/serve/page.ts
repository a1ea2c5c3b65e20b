/** The page of the example service: start a plan, watch it, approve the tool call. No build step, no library. */
export const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>troupe: live plan</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 52rem; color: #1d2433; }
  table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
  td, th { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #dde3ee; }
  .completed { color: #18794e; } .running { color: #b35c00; } .failed { color: #c4291c; }
  #approval { display: none; border: 2px solid #b35c00; border-radius: 8px; padding: .8rem 1rem; margin: 1rem 0; background: #fff8ee; }
  #approval pre { white-space: pre-wrap; background: #fff; padding: .5rem; }
  #log { font: 12px/1.4 ui-monospace, monospace; color: #5b6476; max-height: 14rem; overflow: auto; }
  button { font: inherit; padding: .35rem .9rem; margin-right: .5rem; }
</style>
</head>
<body>
<h1>Release notes plan</h1>
<p><button id="start">Start the plan</button> <span id="status">idle</span></p>
<table><thead><tr><th>#</th><th>chunk</th><th>role</th><th>status</th></tr></thead><tbody id="chunks"></tbody></table>
<div id="approval">
  <strong id="approval-title"></strong>
  <pre id="approval-args"></pre>
  <button id="approve">Approve</button><button id="deny">Deny</button>
</div>
<h2>Answer</h2>
<p id="output">—</p>
<h2>Events</h2>
<div id="log"></div>
<script>
const token = new URLSearchParams(location.search).get('token') || 'demo';
const api = (path) => '/api' + path + (path.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token);
const $ = (id) => document.getElementById(id);
const chunks = new Map();
let runId; let pending;
window.__events = [];
function drawChunks() {
  $('chunks').innerHTML = '';
  for (const c of [...chunks.values()].sort((a, b) => a.id - b.id)) {
    const tr = document.createElement('tr');
    for (const text of [c.id, c.title, c.role, c.status]) { const td = document.createElement('td'); td.textContent = text; tr.appendChild(td); }
    tr.lastChild.className = c.status;
    tr.dataset.chunk = c.id;
    $('chunks').appendChild(tr);
  }
}
function onEvent(message) {
  const e = JSON.parse(message.data);
  window.__events.push({ id: message.lastEventId, type: e.type });
  const line = document.createElement('div');
  line.textContent = message.lastEventId + ' ' + e.type;
  $('log').prepend(line);
  if (e.type === 'plan.started') for (const n of e.graph || []) chunks.set(Number(n.chunkId), { id: Number(n.chunkId), title: n.title, role: n.role, status: 'pending' });
  if (e.type === 'chunk.status') chunks.set(e.sequenceIndex, { id: e.sequenceIndex, title: e.title, role: e.role, status: e.status });
  if (e.type === 'plan.started' || e.type === 'chunk.status') drawChunks();
  if (e.type === 'input.requested' && e.kind === 'approval') {
    pending = e.requestId;
    $('approval-title').textContent = e.agent + ' asks to call ' + e.tool;
    $('approval-args').textContent = JSON.stringify(e.arguments, null, 2);
    $('approval').style.display = 'block';
  }
  if (e.type === 'input.answered' || e.type === 'input.withdrawn') { if (e.requestId === pending) { pending = undefined; $('approval').style.display = 'none'; } }
  if (e.type === 'run.completed' || e.type === 'run.failed') {
    $('status').textContent = e.type === 'run.completed' ? 'completed' : 'failed: ' + e.error;
    $('output').textContent = e.output || '';
    source.close();
  }
}
let source;
function watch(id) {
  // The browser's EventSource reconnects by itself after a drop and sends Last-Event-ID: the server resumes from the run log.
  source = new EventSource(api('/runs/' + id + '/events'));
  source.onmessage = onEvent;
  source.onopen = () => { if ($('status').textContent !== 'completed') $('status').textContent = 'running'; };
}
async function answer(approved) {
  if (!pending) return;
  const response = await fetch(api('/runs/' + runId + '/requests/' + pending), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ approved }) });
  if (response.status !== 200 && response.status !== 409) alert('The answer was refused: ' + (await response.text()));
}
$('approve').onclick = () => answer(true);
$('deny').onclick = () => answer(false);
$('start').onclick = async () => {
  $('start').disabled = true;
  const response = await fetch(api('/runs'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'Prepare the release notes' }) });
  runId = (await response.json()).runId;
  window.__runId = runId;
  watch(runId);
};
</script>
</body>
</html>
`;
