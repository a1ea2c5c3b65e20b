/**
 * `<troupe-approval>`: a tool call waiting for a person — the tool, its
 * arguments and its risk — answered once, for the session, or denied
 * (`troupe-answer` with `{ approved, scope }`). A dangerous tool is never
 * remembered, so it offers no session answer.
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import { answerText } from '../troupe-events.js';
import type { PendingRequest } from '../types.js';
import { theme } from './theme.js';

/** Pretty JSON of the arguments (text only: shown in a `pre`). */
function argumentsText(value: unknown): string {
  if (value === undefined) return '(no arguments)';
  try {
    return JSON.stringify(value, null, 2) ?? '';
  } catch {
    return String(value);
  }
}

/** The approval card. */
export class TroupeApproval extends LitElement {
  static override properties = { request: { attribute: false },
    rev: { type: Number }, theme: { type: String, reflect: true } };
  static override styles = [
    theme,
    css`
      :host { display: block; }
      .card { border: 1px solid var(--_border); border-radius: var(--_radius); padding: 0.6rem 0.75rem; background: var(--_bg); }
      .head { display: flex; gap: 0.5rem; align-items: center; flex-wrap: wrap; }
      code { font-family: var(--_mono); }
      .risk { font-size: 0.75rem; font-weight: 600; padding: 0.05rem 0.45rem; border-radius: 999px; border: 1px solid currentColor; }
      .risk.dangerous { color: var(--_danger); }
      .risk.writes { color: var(--_warning); }
      .risk.read-only { color: var(--_success); }
      pre { font-family: var(--_mono); font-size: 0.82rem; background: var(--_surface); border-radius: 6px; padding: 0.5rem; margin: 0.5rem 0; max-height: 14rem; overflow: auto; white-space: pre-wrap; }
      .actions { display: flex; gap: 0.5rem; flex-wrap: wrap; }
      .done { font-weight: 600; }
    `,
  ];

  declare request: PendingRequest | undefined;
  /** Grows when the request changed (the same object, changed in place). */
  declare rev: number;
  declare theme: string | undefined;

  #answer(approved: boolean, scope: 'once' | 'session'): void {
    if (!this.request) return;
    this.dispatchEvent(new CustomEvent('troupe-answer', { detail: { requestId: this.request.id, answer: approved ? { approved, scope } : { approved } }, bubbles: true, composed: true }));
  }

  override render() {
    const r = this.request;
    if (!r) return nothing;
    const risk = r.risk ?? 'writes';
    const open = r.status === 'pending';
    return html`<div class="card" role="group" aria-label=${`Approval: ${r.agent ?? 'a worker'} asks to call ${r.tool ?? 'a tool'}`}>
      <div class="head">
        <strong>${r.agent ?? 'A worker'}</strong> asks to call <code>${r.tool ?? '?'}</code>
        <span class="risk ${risk}">${risk}</span>
      </div>
      <pre tabindex="0" aria-label="Arguments">${argumentsText(r.arguments)}</pre>
      ${r.error ? html`<p class="error" role="alert">${r.error}</p>` : nothing}
      ${open
        ? html`<div class="actions">
            <button class="primary" type="button" @click=${() => this.#answer(true, 'once')}>Allow once</button>
            ${risk === 'dangerous' ? nothing : html`<button type="button" @click=${() => this.#answer(true, 'session')}>Allow for this session</button>`}
            <button class="danger" type="button" @click=${() => this.#answer(false, 'once')}>Deny</button>
          </div>`
        : html`<p class="done">${r.status === 'sending' ? 'Sending…' : r.status === 'withdrawn' ? 'No longer asked.' : answerText('approval', r.answer ?? {})}</p>`}
    </div>`;
  }
}
