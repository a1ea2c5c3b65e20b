/**
 * Markdown of model output as DOM, built with `createElement` and text
 * nodes only: no HTML is ever parsed from model text, so no script, event
 * handler, SVG or MathML it holds can exist in the page. Links are
 * followed only to `http(s)` and `mailto` (in a new tab, without the
 * referrer); an image loads only from an origin the page allows, else its
 * description is shown in its place. Code blocks have a language badge, a
 * copy button and, when asked, highlighting.
 * @module
 */
import { css } from 'lit';
import { parseMarkdown, plainText, type MarkdownBlock, type MarkdownInline } from '../markdown.js';
import { highlightLater } from './highlight.js';

/** How model text is rendered. */
export interface RenderOptions {
  /** Origins images may load from (`https://cdn.example.com`), or `*` for any `https:` origin. Default: none. */
  imageOrigins?: readonly string[];
  /** Highlight code blocks (for messages on screen). */
  highlight?: boolean;
  /** Called with the code when a copy button is pressed (the default copies to the clipboard). */
  onCopy?: (code: string, button: HTMLButtonElement) => void;
}

/** Rich rendering stops at this many characters; the rest is shown as plain text. */
export const MAX_RICH = 200_000;
/** How deep inline marks are drawn; deeper text is shown plain. */
const MAX_INLINE_DEPTH = 24;

/** Model text as a `div.md`. */
export function renderMarkdown(text: string, options: RenderOptions = {}): HTMLElement {
  const root = el('div', 'md');
  const rich = text.length > MAX_RICH ? text.slice(0, MAX_RICH) : text;
  blocks(root, parseMarkdown(rich), options);
  if (rich !== text) root.append(el('pre', 'md-rest', text.slice(MAX_RICH)));
  return root;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function blocks(parent: HTMLElement, list: readonly MarkdownBlock[], options: RenderOptions): void {
  for (const block of list) parent.append(blockNode(block, options));
}

function blockNode(block: MarkdownBlock, options: RenderOptions): HTMLElement {
  switch (block.type) {
    case 'paragraph':
      return inlines(el('p'), block.children, options);
    case 'heading': {
      const heading = inlines(el('div', `md-h md-h${block.level}`), block.children, options);
      heading.setAttribute('role', 'heading');
      heading.setAttribute('aria-level', String(Math.min(6, block.level + 2)));
      return heading;
    }
    case 'code':
      return codeBlock(block.text, block.lang, options);
    case 'quote': {
      const quote = el('blockquote');
      blocks(quote, block.children, options);
      return quote;
    }
    case 'list': {
      const list = el(block.ordered ? 'ol' : 'ul');
      if (block.ordered && block.start !== 1) list.setAttribute('start', String(block.start));
      for (const item of block.items) {
        const li = el('li');
        blocks(li, item, options);
        list.append(li);
      }
      return list;
    }
    case 'table':
      return table(block, options);
    case 'rule':
      return el('hr');
  }
}

function table(block: Extract<MarkdownBlock, { type: 'table' }>, options: RenderOptions): HTMLElement {
  const wrap = el('div', 'md-table');
  wrap.tabIndex = 0;
  wrap.setAttribute('role', 'region');
  wrap.setAttribute('aria-label', 'Table');
  const t = el('table');
  const head = el('tr');
  block.head.forEach((cell, i) => head.append(alignCell(inlines(el('th'), cell, options), block.align[i])));
  t.append(el('thead'));
  t.tHead!.append(head);
  const body = el('tbody');
  for (const row of block.rows) {
    const tr = el('tr');
    row.forEach((cell, i) => tr.append(alignCell(inlines(el('td'), cell, options), block.align[i])));
    body.append(tr);
  }
  t.append(body);
  wrap.append(t);
  return wrap;
}

function alignCell(cell: HTMLElement, align: 'left' | 'center' | 'right' | null | undefined): HTMLElement {
  if (align) cell.classList.add(`align-${align}`);
  return cell;
}

function codeBlock(code: string, lang: string, options: RenderOptions): HTMLElement {
  const figure = el('figure', 'md-code');
  figure.setAttribute('role', 'group');
  figure.setAttribute('aria-label', lang ? `Code (${lang})` : 'Code');
  const head = el('div', 'md-code-head');
  head.append(el('span', 'md-lang', lang || 'text'));
  const copy = el('button', 'md-copy', 'Copy');
  copy.type = 'button';
  copy.setAttribute('aria-label', lang ? `Copy the ${lang} code` : 'Copy the code');
  copy.addEventListener('click', () => (options.onCopy ?? copyToClipboard)(code, copy));
  head.append(copy);
  const pre = el('pre');
  pre.tabIndex = 0;
  pre.setAttribute('aria-label', lang ? `${lang} code` : 'code');
  const codeNode = el('code', lang ? `hljs language-${lang.replace(/[^\w-]/g, '')}` : 'hljs');
  codeNode.textContent = code;
  if (lang) codeNode.dataset['lang'] = lang;
  // Shown plain at once; highlighted when the page is idle.
  if (options.highlight) highlightLater(codeNode, code, lang);
  pre.append(codeNode);
  figure.append(head, pre);
  return figure;
}

/** The default copy: the clipboard, and the button says so. */
function copyToClipboard(code: string, button: HTMLButtonElement): void {
  const done = (label: string) => {
    button.textContent = label;
    setTimeout(() => (button.textContent = 'Copy'), 1500);
  };
  if (!navigator.clipboard) return done('Copy failed');
  navigator.clipboard.writeText(code).then(
    () => done('Copied'),
    () => done('Copy failed'),
  );
}

function inlines(parent: HTMLElement, nodes: readonly MarkdownInline[], options: RenderOptions, depth = 0): HTMLElement {
  for (const node of nodes) parent.append(inlineNode(node, options, depth));
  return parent;
}

function inlineNode(node: MarkdownInline, options: RenderOptions, depth: number): Node {
  if (depth > MAX_INLINE_DEPTH && node.type !== 'text' && node.type !== 'break') return document.createTextNode(plainText([node]));
  switch (node.type) {
    case 'text':
      return document.createTextNode(node.text);
    case 'code':
      return el('code', 'md-inline-code', node.text);
    case 'break':
      return el('br');
    case 'em':
    case 'strong':
    case 'del':
      return inlines(el(node.type === 'del' ? 's' : node.type), node.children, options, depth + 1);
    case 'link': {
      const href = safeLink(node.href);
      if (!href) {
        const span = inlines(el('span', 'md-link-refused'), node.children, options, depth + 1);
        span.title = 'A link troupe does not follow';
        return span;
      }
      const a = inlines(el('a'), node.children, options, depth + 1) as HTMLAnchorElement;
      a.href = href;
      a.target = '_blank';
      a.rel = 'noopener noreferrer nofollow ugc';
      a.referrerPolicy = 'no-referrer';
      return a;
    }
    case 'image':
      return image(node.src, node.alt, options);
  }
}

/** `href` when it is an absolute `http:`, `https:` or `mailto:` URL; else undefined (nothing else is followed). */
export function safeLink(href: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:' ? url.href : undefined;
}

/** Whether an image may load: a raster `data:` image (no request), or an `https:` URL of an allowed origin. */
export function imageAllowed(src: string, origins: readonly string[]): boolean {
  if (src.startsWith('data:image/png;base64,') || src.startsWith('data:image/jpeg;base64,') || src.startsWith('data:image/gif;base64,') || src.startsWith('data:image/webp;base64,')) return true;
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  return origins.includes(url.origin) || (url.protocol === 'https:' && origins.includes('*'));
}

function image(src: string, alt: string, options: RenderOptions): Node {
  if (imageAllowed(src, options.imageOrigins ?? [])) {
    const img = el('img');
    img.alt = alt;
    img.loading = 'lazy';
    img.referrerPolicy = 'no-referrer';
    img.decoding = 'async';
    img.src = src;
    return img;
  }
  let host = '';
  try {
    host = new URL(src).host;
  } catch {
    host = '';
  }
  const span = el('span', 'md-image-blocked', `[image${alt ? `: ${alt}` : ''}${host ? ` — not loaded from ${host}` : ''}]`);
  return span;
}

/** Styles of rendered Markdown (inside an element's shadow root). */
export const markdownStyles = css`
.md { line-height: 1.5; overflow-wrap: anywhere; }
.md > :first-child { margin-top: 0; }
.md > :last-child { margin-bottom: 0; }
.md p, .md ul, .md ol, .md blockquote, .md figure, .md .md-table { margin: 0.4rem 0; }
.md ul, .md ol { padding-left: 1.4rem; }
.md blockquote { border-left: 3px solid var(--_border); padding-left: 0.75rem; color: var(--_muted); }
.md .md-h { font-weight: 650; margin: 0.6rem 0 0.3rem; }
.md .md-h1 { font-size: 1.2rem; } .md .md-h2 { font-size: 1.1rem; } .md .md-h3 { font-size: 1rem; }
.md a { color: var(--_accent); }
.md .md-link-refused { text-decoration: underline dotted; }
.md .md-inline-code { font-family: var(--_mono); font-size: 0.88em; background: var(--_surface-2); padding: 0.05rem 0.3rem; border-radius: 4px; }
.md .md-code { border: 1px solid var(--_border); border-radius: 8px; overflow: hidden; margin: 0.5rem 0; }
.md .md-code-head { display: flex; justify-content: space-between; align-items: center; background: var(--_surface-2); padding: 0.2rem 0.5rem; font-size: 0.8rem; }
.md .md-lang { font-family: var(--_mono); color: var(--_muted); }
.md .md-copy { padding: 0.1rem 0.5rem; font-size: 0.8rem; }
.md pre { margin: 0; padding: 0.6rem 0.75rem; overflow-x: auto; font-family: var(--_mono); font-size: 0.85rem; background: var(--_bg); }
.md .md-rest, .md.md-plain { white-space: pre-wrap; }
.md .md-table { overflow-x: auto; }
.md table { border-collapse: collapse; font-size: 0.9rem; }
.md th, .md td { border: 1px solid var(--_border); padding: 0.25rem 0.5rem; }
.md .align-center { text-align: center; } .md .align-right { text-align: right; }
.md hr { border: 0; border-top: 1px solid var(--_border); }
.md img { max-width: 100%; height: auto; }
.md .md-image-blocked { color: var(--_muted); font-style: italic; }
.hljs-keyword, .hljs-selector-tag, .hljs-built_in, .hljs-type { color: var(--_lead); }
.hljs-string, .hljs-attr, .hljs-symbol, .hljs-template-tag, .hljs-addition { color: var(--_success); }
.hljs-comment, .hljs-quote, .hljs-meta { color: var(--_muted); font-style: italic; }
.hljs-number, .hljs-literal, .hljs-variable, .hljs-template-variable { color: var(--_injection); }
.hljs-title, .hljs-section, .hljs-name, .hljs-selector-id, .hljs-selector-class { color: var(--_user); }
.hljs-deletion { color: var(--_danger); }
`;
