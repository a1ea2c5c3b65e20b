/**
 * DOM helpers of the report page: elements from a tag, attributes and
 * children (text is always set as text, never parsed as HTML), and the
 * formats numbers are shown in.
 * @module
 */

/** A child: a node, text, nothing, or a list of them (lists are not spread into arguments, so any length works). */
type Child = Node | string | number | null | undefined | false | readonly Child[];
type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

const SVG = 'http://www.w3.org/2000/svg';

function fill(el: Element, attrs: Attrs, children: Child[]): void {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.replace(/^on/, ''), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
}

function append(el: Element, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c as readonly Child[]);
    else el.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : (c as Node));
  }
}

/** An HTML element. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  fill(el, attrs, children);
  return el;
}

/** An SVG element. */
export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  fill(el, attrs, children);
  return el;
}

/** A duration: `850 ms`, `12.4 s`, `3 min 5 s`. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const min = Math.floor(ms / 60_000);
  return `${min} min ${Math.round((ms - min * 60_000) / 1000)} s`;
}

/** A token count with thousands separators. */
export function tokens(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A cost in dollars (`$0.0123`), or `–` when zero. */
export function cost(usd: number): string {
  if (!usd) return '–';
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** CSS classes for a status and its reason (`st-completed`, `st-completed rs-max-iterations`). */
export function statusClass(status: string, reason?: string): string {
  const cls = (prefix: string, word: string) => `${prefix}-${word.replace(/[^A-Za-z0-9-]/g, '')}`;
  return reason === undefined ? cls('st', status) : `${cls('st', status)} ${cls('rs', reason)}`;
}

/** A status as the page writes it: `completed`, or with its reason `completed (goal-met)`. */
export function statusText(status: string, reason?: string): string {
  return reason === undefined ? status : `${status} (${reason})`;
}

/** Cut a label to `max` characters. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}
