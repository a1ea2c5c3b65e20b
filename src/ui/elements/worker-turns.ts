/**
 * `<troupe-worker-turns>`: one worker's own turns — what it was sent (its
 * prompts and tool results), the tools it called and what it answered —
 * so that the work of a sub-agent is never out of sight. Text only.
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import type { TurnView } from '../types.js';
import { theme } from './theme.js';

/** The turns panel. */
export class TroupeWorkerTurns extends LitElement {
  static override properties = { turns: { attribute: false }, heading: { type: String }, theme: { type: String, reflect: true } };
  static override styles = [
    theme,
    css`
      :host { display: block; }
      section { border: 1px solid var(--_border); border-radius: var(--_radius); background: var(--_bg); max-height: 70vh; overflow: auto; }
      header { position: sticky; top: 0; display: flex; justify-content: space-between; align-items: center; padding: 0.5rem 0.75rem; background: var(--_surface); border-bottom: 1px solid var(--_border); }
      h2 { font-size: 1rem; margin: 0; }
      ol { list-style: none; margin: 0; padding: 0.5rem 0.75rem; display: grid; gap: 0.6rem; }
      li { border-left: 3px solid var(--_border); padding-left: 0.6rem; }
      h3 { font-size: 0.85rem; margin: 0 0 0.25rem; color: var(--_muted); font-weight: 600; }
      pre { white-space: pre-wrap; font-family: var(--_mono); font-size: 0.8rem; margin: 0.2rem 0; background: var(--_surface); padding: 0.4rem; border-radius: 6px; max-height: 16rem; overflow: auto; }
      .label { font-size: 0.75rem; color: var(--_muted); }
    `,
  ];

  declare turns: readonly TurnView[];
  declare heading: string;
  declare theme: string | undefined;

  constructor() {
    super();
    this.turns = [];
    this.heading = 'Turns';
  }

  override render() {
    return html`<section role="region" aria-label=${this.heading} @keydown=${(e: KeyboardEvent) => e.key === 'Escape' && this.#close()}>
      <header>
        <h2>${this.heading}</h2>
        <button type="button" @click=${() => this.#close()}>Close</button>
      </header>
      ${this.turns.length === 0 ? html`<p class="muted">No turns yet.</p>` : nothing}
      <ol>
        ${this.turns.map(
          (t) => html`<li>
            <h3>Turn ${t.turn} · ${t.agent} · ${new Date(t.time).toLocaleTimeString()}</h3>
            <span class="label">Sent</span>
            <pre tabindex="0">${t.input}</pre>
            ${t.toolCalls.length ? html`<span class="label">Tool calls</span><pre tabindex="0">${t.toolCalls.map((c) => `${c.name} ${c.args}`).join('\n')}</pre>` : nothing}
            <span class="label">${t.error ? 'Failed' : 'Answered'}</span>
            <pre tabindex="0">${t.error ?? (t.reply || '(no text)')}</pre>
          </li>`,
        )}
      </ol>
    </section>`;
  }

  #close(): void {
    this.dispatchEvent(new CustomEvent('troupe-close', { bubbles: true, composed: true }));
  }
}
