/**
 * One card of the team chat: who speaks (colour, avatar, label, role,
 * time) and what — Markdown, a tool call, a request answered in place, or
 * a line from troupe. Rendered Markdown is kept per message and revision,
 * so scrolling back to a card does not render it again.
 * @module
 */
import { css, html, nothing, type TemplateResult } from 'lit';
import { styleProps } from './style-props.js';
import type { ChatModel } from '../model.js';
import type { ChatMessage } from '../types.js';
import { resumeHighlighting } from './highlight.js';
import { markdownStyles, renderMarkdown, type RenderOptions } from './render-markdown.js';
import { sourceColour } from './theme.js';

const SOURCE_LABELS: Record<string, string> = { user: 'you', lead: 'lead', worker: 'worker', system: 'troupe', injection: 'instruction' };
/** One formatter for every card (making one per call is slow). */
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** How often a streaming message's Markdown is drawn again, at most. */
const STREAM_REDRAW_MS = 120;

/** Rendered Markdown by message, newest revision only, the least recently shown dropped first. */
export class MarkdownCache {
  readonly #entries = new Map<string, { key: string; node: HTMLElement; at: number }>();
  /** Called when a streaming message was drawn with text a little behind, to draw it again soon. */
  onStale: (() => void) | undefined;
  constructor(readonly limit = 400) {}

  /** The message drawn: rich Markdown, or, with `plain` (the reader is scrolling fast) and nothing drawn yet, its text alone. */
  get(message: ChatMessage, options: RenderOptions, plain = false): HTMLElement {
    const key = `${message.rev}:${message.streaming ? 's' : ''}:${message.text.length}`;
    const hit = this.#entries.get(message.id);
    if (plain && hit?.key !== key) return plainBody(message.text);
    const now = performance.now();
    // Streaming text is drawn again at most every STREAM_REDRAW_MS: between, the card shows it a moment behind.
    if (hit && hit.key !== key && message.streaming && now - hit.at < STREAM_REDRAW_MS) {
      this.onStale?.();
      return hit.node;
    }
    if (hit) this.#entries.delete(message.id);
    const entry = hit && hit.key === key ? hit : { key, at: now, node: renderMarkdown(message.text, { ...options, highlight: !message.streaming && options.highlight !== false }) };
    if (entry === hit) resumeHighlighting(entry.node);
    this.#entries.set(message.id, entry);
    if (this.#entries.size > this.limit) this.#entries.delete(this.#entries.keys().next().value!);
    return entry.node;
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** A message's text without its Markdown, cut short: what a card shows while the reader flies past it. */
function plainBody(text: string): HTMLElement {
  const node = document.createElement('div');
  node.className = 'md md-plain';
  node.textContent = text.length > 600 ? `${text.slice(0, 600)}…` : text;
  return node;
}

/** What a card needs from the chat. */
export interface MessageContext {
  model: ChatModel;
  cache: MarkdownCache;
  render: RenderOptions;
  theme: string | undefined;
  index: number;
  count: number;
  focused: boolean;
  /** The reader scrolls: draw what is not drawn yet plainly. */
  scrolling: boolean;
  onTurns: (workerKey: string) => void;
}

/** The card of `message`. */
export function messageTemplate(message: ChatMessage, ctx: MessageContext): TemplateResult {
  const worker = message.workerKey ? ctx.model.workers.get(message.workerKey) : undefined;
  const colour = sourceColour(message.source, worker?.colour);
  const time = new Date(message.time);
  return html`<article
    class="msg src-${message.source} kind-${message.kind}"
    data-id=${message.id}
    data-source=${message.source}
    data-kind=${message.kind}
    tabindex=${ctx.focused ? 0 : -1}
    aria-posinset=${ctx.index + 1}
    aria-setsize=${ctx.count}
    aria-labelledby=${`a-${message.id}`}
    aria-busy=${message.streaming ? 'true' : 'false'}
    ${styleProps({ '--_c': colour })}
  >
    <header>
      <span class="avatar" aria-hidden="true">${(message.author.trim()[0] ?? '?').toUpperCase()}</span>
      <span class="author" id=${`a-${message.id}`}>${message.author}</span>
      <span class="badge">${SOURCE_LABELS[message.source] ?? message.source}</span>
      <time datetime=${time.toISOString()}>${TIME.format(time)}</time>
      ${worker && ctx.model.turns.some((t) => t.workerKey === worker.key)
        ? html`<button class="turns" type="button" aria-label=${`Show the turns of ${message.author}`} @click=${() => ctx.onTurns(worker.key)}>Turns</button>`
        : nothing}
    </header>
    <div class="body">${body(message, ctx)}</div>
  </article>`;
}

function body(message: ChatMessage, ctx: MessageContext): unknown {
  switch (message.kind) {
    case 'text':
      return html`${ctx.cache.get(message, ctx.render, ctx.scrolling)}${message.streaming ? html`<span class="cursor" aria-hidden="true"></span>` : nothing}`;
    case 'tool': {
      const tool = message.tool!;
      const state = tool.result === undefined ? 'running' : tool.isError ? 'failed' : 'done';
      return html`<details class="tool">
        <summary>Called <code>${tool.name}</code> <span class="tool-state ${state}">${state}</span></summary>
        <pre tabindex="0" aria-label="Arguments">${tool.args}</pre>
        ${tool.result === undefined ? nothing : html`<pre tabindex="0" aria-label="Result">${tool.result}</pre>`}
      </details>`;
    }
    case 'request':
      return request(message, ctx);
    default:
      return html`<p class="line">${message.text}</p>`;
  }
}

function request(message: ChatMessage, ctx: MessageContext): unknown {
  const r = message.requestId ? ctx.model.requests.get(message.requestId) : undefined;
  if (!r) return html`<p class="line">${message.text}</p>`;
  if (r.kind === 'approval') return html`<troupe-approval .request=${r} theme=${ctx.theme ?? nothing} .rev=${message.rev}></troupe-approval>`;
  if (r.kind === 'plan-approval') return html`<troupe-plan-review .request=${r} theme=${ctx.theme ?? nothing} .rev=${message.rev}></troupe-plan-review>`;
  const state = r.status === 'pending' ? 'Answer in the box below.' : r.status === 'withdrawn' ? 'No longer asked.' : r.status === 'sending' ? 'Sending…' : 'Answered.';
  return html`<div class="question">
    ${r.prompt && r.questions?.length ? html`<p class="line">${r.prompt}</p>` : nothing}${ctx.cache.get(message, ctx.render)}
    ${r.error ? html`<p class="error" role="alert">${r.error}</p>` : nothing}
    <p class="hint">${state}</p>
  </div>`;
}

/** The styles of cards. */
export const messageStyles = [
  css`
    .msg { display: grid; gap: 0.3rem; margin: 0 0.75rem; padding: 0.55rem 0.75rem 0.6rem; border-left: 4px solid var(--_c); background: var(--_surface); border-radius: 0 var(--_radius) var(--_radius) 0; }
    .msg.src-user, .msg.src-injection { background: var(--_surface-2); }
    .msg.src-injection { border-left-style: dashed; }
    .msg.src-system { background: transparent; padding-top: 0.25rem; padding-bottom: 0.25rem; }
    header { display: flex; gap: 0.45rem; align-items: center; font-size: 0.8rem; min-width: 0; }
    .avatar { width: 1.5rem; height: 1.5rem; border-radius: 50%; display: inline-grid; place-items: center; font-weight: 700; font-size: 0.75rem; background: var(--_c); color: var(--_on-colour); flex: none; }
    .author { font-weight: 650; color: var(--_text); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .badge { color: var(--_muted); border: 1px solid var(--_border); border-radius: 999px; padding: 0 0.4rem; }
    .src-injection .badge { color: var(--_injection); border-color: var(--_injection); }
    time { color: var(--_muted); margin-left: auto; font-variant-numeric: tabular-nums; }
    .turns { padding: 0 0.45rem; font-size: 0.75rem; }
    .body { min-width: 0; }
    .line { margin: 0; }
    .src-system .line { color: var(--_muted); font-size: 0.85rem; }
    .kind-error .line { color: var(--_danger); }
    .cursor { display: inline-block; width: 0.5em; height: 1em; background: var(--_c); vertical-align: text-bottom; margin-left: 2px; animation: blink 1s steps(2) infinite; }
    @keyframes blink { 50% { opacity: 0; } }
    .tool summary { cursor: pointer; font-size: 0.85rem; }
    .tool code { font-family: var(--_mono); }
    .tool pre { font-family: var(--_mono); font-size: 0.8rem; white-space: pre-wrap; background: var(--_bg); padding: 0.4rem; border-radius: 6px; max-height: 14rem; overflow: auto; margin: 0.3rem 0 0; }
    .tool-state { color: var(--_muted); } .tool-state.failed { color: var(--_danger); } .tool-state.done { color: var(--_success); }
    .question .hint { margin: 0.3rem 0 0; color: var(--_muted); font-size: 0.85rem; }
  `,
  markdownStyles,
];
