/**
 * Syntax highlighting of code blocks: highlight.js's core with the
 * languages models write most, registered here (the others stay plain).
 * Its output is read as inert markup and rebuilt from an allow-list —
 * spans with `hljs-*` classes and text — so nothing but those reaches the
 * page, whatever the code holds.
 * @module
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const languages = { bash, css, diff, go, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);
hljs.configure({ ignoreUnescapedHTML: true });

/** The longest code block highlighted; a longer one stays plain text. */
export const MAX_HIGHLIGHT = 20_000;

/** The languages highlighted, by name or alias. */
export function knownLanguage(lang: string): string | undefined {
  const name = lang.toLowerCase();
  return name !== '' && hljs.getLanguage(name) ? name : undefined;
}

/** Highlighted code as DOM nodes (spans and text only), or undefined to show it plain. */
export function highlight(code: string, lang: string): DocumentFragment | undefined {
  const language = knownLanguage(lang);
  if (!language || code.length > MAX_HIGHLIGHT) return undefined;
  let markup: string;
  try {
    markup = hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return undefined;
  }
  const template = document.createElement('template');
  template.innerHTML = markup; // inert: a template's content runs nothing and loads nothing
  const out = document.createDocumentFragment();
  copySafe(template.content, out);
  return out;
}

/** Copy `from`'s text and `span.hljs-*` elements into `to`, nothing else. Iterative. */
function copySafe(from: Node, to: Node): void {
  const stack: Array<[Node, Node]> = [];
  for (let child = from.lastChild; child; child = child.previousSibling) stack.push([child, to]);
  while (stack.length > 0) {
    const [node, parent] = stack.pop()!;
    if (node.nodeType === Node.TEXT_NODE) {
      parent.appendChild(document.createTextNode(node.textContent ?? ''));
      continue;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) continue;
    const element = node as Element;
    let target = parent;
    if (element.localName === 'span') {
      const span = document.createElement('span');
      const classes = [...element.classList].filter((c) => c.startsWith('hljs-') && c.length < 40);
      if (classes.length > 0) span.className = classes.join(' ');
      parent.appendChild(span);
      target = span;
    }
    for (let child = element.lastChild; child; child = child.previousSibling) stack.push([child, target]);
  }
}

/** Code blocks waiting to be highlighted, oldest first. */
const waiting: Array<{ node: HTMLElement; code: string; lang: string }> = [];
let scheduled = false;

/**
 * Highlight `node` (a `code` element showing `code` plain) when the page is
 * idle, a few milliseconds at a time, so that highlighting never holds up a
 * frame. A block no longer on the page is skipped (and marked, so that it
 * is queued again when it is shown).
 */
export function highlightLater(node: HTMLElement, code: string, lang: string): void {
  if (!knownLanguage(lang) || code.length > MAX_HIGHLIGHT) return;
  node.dataset['pending'] = '1';
  waiting.push({ node, code, lang });
  schedule();
}

/** Queue again the blocks under `root` that were skipped while off the page. */
export function resumeHighlighting(root: HTMLElement): void {
  for (const node of root.querySelectorAll<HTMLElement>('code[data-pending="1"]')) {
    if (waiting.some((w) => w.node === node)) continue;
    waiting.push({ node, code: node.textContent ?? '', lang: node.dataset['lang'] ?? '' });
  }
  if (waiting.length > 0) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  const run = () => {
    scheduled = false;
    const end = performance.now() + 6;
    while (waiting.length > 0 && performance.now() < end) {
      const job = waiting.shift()!;
      if (!job.node.isConnected) continue;
      const highlighted = highlight(job.code, job.lang);
      if (highlighted) job.node.replaceChildren(highlighted);
      delete job.node.dataset['pending'];
    }
    if (waiting.length > 0) schedule();
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 500 });
  else setTimeout(run, 16);
}
