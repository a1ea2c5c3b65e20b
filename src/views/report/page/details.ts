/**
 * The details panel: what a clicked op or chunk did — its input and output,
 * its model turns and tool calls, its error.
 * @module
 */
import type { ReportChunk, ReportOp, ReportPlan, RunReportData } from '../data.js';
import { cost, duration, h, statusClass, statusText, tokens } from './dom.js';
import type { Select, Selection } from './main.js';

/** The panel's content for a selection. */
export function details(data: RunReportData, selection: Selection | undefined, select: Select): HTMLElement[] {
  if (!selection) return [h('p', { class: 'hint' }, 'Click a bar of the timeline or a chunk of a plan to see its input, output, tool calls and error.')];
  if ('op' in selection) {
    const op = data.ops.find((o) => o.id === selection.op);
    return op ? opDetails(data, op, select) : [h('p', {}, `Unknown op ${selection.op}`)];
  }
  const [planOpId, chunkId] = selection.chunk.split('|');
  const plan = data.plans.find((p) => p.opId === planOpId);
  const chunk = plan?.chunks.find((c) => c.chunkId === chunkId);
  return plan && chunk ? chunkDetails(data, plan, chunk, select) : [h('p', {}, `Unknown chunk ${selection.chunk}`)];
}

function field(label: string, value: string | number | Node | undefined): HTMLElement | undefined {
  if (value === undefined || value === '') return undefined;
  return h('div', { class: 'field' }, h('span', { class: 'field-label' }, label), h('span', { class: 'field-value' }, value));
}

function block(title: string, text: string | undefined, cls = ''): HTMLElement | undefined {
  if (text === undefined) return undefined;
  return h('div', { class: `block ${cls}` }, h('h4', {}, title), h('pre', {}, text === '' ? '(empty)' : text));
}

function link(label: string, onClick: () => void): HTMLElement {
  return h('button', { type: 'button', class: 'link', onclick: onClick }, label);
}

function opDetails(data: RunReportData, op: ReportOp, select: Select): HTMLElement[] {
  const u = op.usage;
  const parent = op.parentId === undefined ? undefined : data.ops.find((o) => o.id === op.parentId);
  const children = data.ops.filter((o) => o.parentId === op.id);
  const turns = data.turns.filter((t) => t.opId === op.id);
  const tools = data.tools.filter((t) => t.opId === op.id);
  const out: Array<HTMLElement | undefined> = [
    h('h3', { 'data-testid': 'details-title' }, `${op.kind} ${op.name}`),
    h('p', {}, h('span', { class: `badge ${statusClass(op.status, op.reason)}` }, statusText(op.status, op.reason))),
    field('Agent', op.agent),
    field('Op', op.id),
    field('Started', `+${duration(op.start - data.run.start)}`),
    field('Duration', op.end === undefined ? 'still running when the log ends' : duration(op.end - op.start)),
    op.plan ? field('Plan', `${op.plan.planId}${op.plan.chunkId ? ` · chunk #${op.plan.chunkId}` : ''}${op.plan.attempt ? ` · attempt ${op.plan.attempt}` : ''}`) : undefined,
    field('Iteration', op.iteration),
    field('Round', op.round),
    u ? field('Usage', `${tokens(u.inputTokens)} in · ${tokens(u.outputTokens)} out · ${u.turns} turns · ${cost(u.costUsd)}`) : undefined,
    parent ? field('Inside', link(`${parent.kind} ${parent.name}`, () => select({ op: parent.id }))) : undefined,
    op.error !== undefined ? block(`Error${op.code ? ` (${op.code})` : ''}`, op.error, 'error') : undefined,
    block('Input', op.input),
    block('Output', op.output),
  ];
  if (children.length > 0) {
    out.push(h('div', { class: 'block' }, h('h4', {}, `Inside (${children.length})`), h('ul', { class: 'children' }, children.map((c) => h('li', {}, link(`${c.kind} ${c.name}`, () => select({ op: c.id })), ' ', h('span', { class: `badge ${statusClass(c.status, c.reason)}` }, statusText(c.status, c.reason)))))));
  }
  if (tools.length > 0) {
    out.push(
      h(
        'div',
        { class: 'block', 'data-testid': 'tool-calls' },
        h('h4', {}, `Tool calls (${tools.length})`),
        tools.map((t) =>
          h(
            'details',
            { class: t.isError ? 'tool error' : 'tool', open: tools.length <= 3 },
            h('summary', {}, `${t.name}${t.isError ? ' — error' : ''}${t.end === undefined ? ' — no result' : ` — ${duration(t.end - t.start)}`}`),
            h('h5', {}, 'Arguments'),
            h('pre', {}, t.arguments),
            h('h5', {}, 'Result'),
            h('pre', {}, t.result ?? '(none: the call was cut off)'),
          ),
        ),
      ),
    );
  }
  if (turns.length > 0) {
    out.push(
      h(
        'div',
        { class: 'block' },
        h('h4', {}, `Model turns (${turns.length})`),
        turns.map((t) =>
          h(
            'details',
            { class: t.error ? 'turn error' : 'turn' },
            h('summary', {}, `turn ${t.turn} of ${t.agent}${t.model ? ` on ${t.model}` : ''} — ${duration(t.end - t.start)}${t.usage ? ` · ${tokens(t.usage.inputTokens ?? 0)} in · ${tokens(t.usage.outputTokens ?? 0)} out` : ''}${t.error ? ' — failed' : ''}`),
            h('h5', {}, 'Sent'),
            h('pre', {}, t.input),
            t.output !== undefined ? h('h5', {}, 'Reply') : null,
            t.output !== undefined ? h('pre', {}, t.output || (t.toolCalls?.length ? '(tool calls only)' : '(empty)')) : null,
            t.toolCalls?.length ? h('h5', {}, 'Asked for tools') : null,
            t.toolCalls?.length ? h('pre', {}, t.toolCalls.map((c) => `${c.name} ${c.arguments}`).join('\n')) : null,
            t.error !== undefined ? h('pre', { class: 'error' }, t.error) : null,
          ),
        ),
      ),
    );
  }
  return out.filter((x): x is HTMLElement => x !== undefined);
}

function chunkDetails(data: RunReportData, plan: ReportPlan, chunk: ReportChunk, select: Select): HTMLElement[] {
  const deps = chunk.dependsOn.map((d) => plan.chunks.find((c) => c.chunkId === d)).filter((c): c is ReportChunk => c !== undefined);
  const ops = chunk.opIds.map((id) => data.ops.find((o) => o.id === id)).filter((o): o is ReportOp => o !== undefined);
  const last = ops.at(-1);
  const out: Array<HTMLElement | undefined> = [
    h('h3', { 'data-testid': 'details-title' }, `#${chunk.chunkId} ${chunk.title}`),
    h('p', {}, h('span', { class: `badge ${statusClass(chunk.status)}` }, chunk.status), chunk.critical ? h('span', { class: 'badge critical' }, 'critical path') : null),
    field('Plan', plan.planId),
    field('Role', chunk.role),
    field('Duration', chunk.attempts.length ? duration(chunk.durationMs) : 'not run'),
    deps.length ? field('Depends on', h('span', {}, ...deps.flatMap((d, i) => [i ? ', ' : '', link(`#${d.chunkId} ${d.title}`, () => select({ chunk: `${plan.opId}|${d.chunkId}` }))]))) : undefined,
    chunk.error !== undefined ? block('Error', chunk.error, 'error') : undefined,
    h(
      'div',
      { class: 'block' },
      h('h4', {}, `Attempts (${chunk.attempts.length})`),
      h(
        'ol',
        { class: 'attempts' },
        chunk.attempts.map((a) => {
          const op = ops.find((o) => o.plan?.attempt === a.attempt);
          return h(
            'li',
            {},
            h('span', { class: `badge ${statusClass(a.status)}` }, a.status),
            ` ${a.end === undefined ? 'running' : duration(a.end - a.start)} `,
            op ? link(`${op.kind} ${op.name}`, () => select({ op: op.id })) : null,
            a.error ? h('div', { class: 'muted' }, a.error) : null,
          );
        }),
      ),
    ),
    last ? block('Input (last attempt)', nearest(data, last, (o) => o.input)) : undefined,
    last ? block('Output (last attempt)', lastOutput(data, last)) : undefined,
  ];
  return out.filter((x): x is HTMLElement => x !== undefined);
}

/** The first value `pick` finds on an op or, breadth first, on the ops inside it. */
function nearest(data: RunReportData, op: ReportOp, pick: (op: ReportOp) => string | undefined): string | undefined {
  const queue = [op];
  for (let i = 0; i < queue.length && i < 500; i++) {
    const value = pick(queue[i]!);
    if (value !== undefined) return value;
    queue.push(...data.ops.filter((o) => o.parentId === queue[i]!.id));
  }
  return undefined;
}

/** An op's output or, when events do not carry it (patterns), that of the last op inside it to finish with one. */
function lastOutput(data: RunReportData, op: ReportOp): string | undefined {
  if (op.output !== undefined) return op.output;
  const inside = new Set([op.id]);
  let best: ReportOp | undefined;
  for (const o of data.ops) {
    if (o.parentId === undefined || !inside.has(o.parentId)) continue;
    inside.add(o.id);
    if (o.output !== undefined && (best === undefined || (o.end ?? 0) >= (best.end ?? 0))) best = o;
  }
  return best?.output;
}
