/**
 * `<troupe-team-picker>`: what the folder offers — the lead planning with
 * workers, its agents, its teams, its plan templates, and squad presets in
 * three sections (from the repository, built in, the user's own) — and a
 * form that starts a run of the one picked (`troupe-run-started`).
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import type { Catalog, CatalogEntry } from '../types.js';
import { TroupeApi } from './client.js';
import { theme } from './theme.js';

const SECTIONS: Array<{ title: string; test: (e: CatalogEntry) => boolean }> = [
  { title: 'Plan with the lead', test: (e) => e.kind === 'planning' },
  { title: 'Agents', test: (e) => e.kind === 'agent' },
  { title: 'Teams', test: (e) => e.kind === 'team' },
  { title: 'Plan templates', test: (e) => e.kind === 'template' },
  { title: 'Squads from the repository', test: (e) => e.kind === 'squad' && e.source === 'repo' },
  { title: 'Built-in squads', test: (e) => e.kind === 'squad' && e.source === 'builtin' },
  { title: 'Your squads', test: (e) => e.kind === 'squad' && e.source === 'user' },
];

const keyOf = (e: CatalogEntry): string => `${e.kind}:${e.source ?? ''}:${e.name}`;

/** The team picker. */
export class TroupeTeamPicker extends LitElement {
  static override properties = {
    endpoint: { type: String },
    token: { type: String },
    theme: { type: String, reflect: true },
    headers: { attribute: false },
    catalog: { attribute: false },
    _picked: { state: true },
    _input: { state: true },
    _values: { state: true },
    _error: { state: true },
    _busy: { state: true },
  };
  static override styles = [
    theme,
    css`
      :host { display: block; }
      h2 { font-size: 1rem; margin: 0.25rem 0; }
      h3 { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--_muted); margin: 0.7rem 0 0.3rem; }
      ul { list-style: none; padding: 0; margin: 0; display: grid; gap: 0.3rem; }
      .entry { width: 100%; text-align: left; display: grid; gap: 0.1rem; }
      .entry[aria-pressed='true'] { border-color: var(--_accent); box-shadow: inset 3px 0 0 var(--_accent); }
      .entry .name { font-weight: 600; }
      .entry .desc { font-size: 0.78rem; color: var(--_muted); }
      form { display: grid; gap: 0.4rem; margin-top: 0.6rem; padding: 0.5rem; border: 1px solid var(--_border); border-radius: 8px; background: var(--_surface); }
      label { display: grid; gap: 0.15rem; font-size: 0.8rem; }
      textarea { min-height: 4rem; resize: vertical; }
      .empty { font-size: 0.8rem; }
    `,
  ];

  declare endpoint: string;
  declare token: string | undefined;
  declare theme: string | undefined;
  declare headers: Record<string, string> | undefined;
  /** The catalogue; read from the server (`GET /catalog`) when not given. */
  declare catalog: Catalog | undefined;
  declare _picked: string | undefined;
  declare _input: string;
  declare _values: Record<string, string>;
  declare _error: string;
  declare _busy: boolean;

  constructor() {
    super();
    this.endpoint = '';
    this._input = '';
    this._values = {};
    this._error = '';
    this._busy = false;
  }

  #api(): TroupeApi {
    return new TroupeApi({ endpoint: this.endpoint, token: this.token, headers: this.headers });
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (!this.catalog && this.endpoint) {
      this.#api()
        .catalog()
        .then((catalog) => {
          this.catalog = catalog;
          this.dispatchEvent(new CustomEvent('troupe-catalog', { detail: catalog, bubbles: true, composed: true }));
        })
        .catch((error: unknown) => (this._error = error instanceof Error ? error.message : String(error)));
    }
  }

  #picked(): CatalogEntry | undefined {
    return this.catalog?.entries.find((e) => keyOf(e) === this._picked);
  }

  override render() {
    const entries = this.catalog?.entries ?? [];
    return html`<section aria-labelledby="picker-title">
      <h2 id="picker-title">Start a run</h2>
      ${this._error ? html`<p class="error" role="alert">${this._error}</p>` : nothing}
      ${!this.catalog && !this._error ? html`<p class="muted">Reading the folder…</p>` : nothing}
      ${SECTIONS.map(({ title, test }) => {
        const list = entries.filter(test);
        return html`<h3>${title}</h3>${list.length === 0
            ? html`<p class="muted empty">None.</p>`
            : html`<ul aria-label=${title}>
                ${list.map((e) => html`<li>${this.#entry(e)}${keyOf(e) === this._picked ? this.#form() : nothing}</li>`)}
              </ul>`}`;
      })}
    </section>`;
  }

  #entry(e: CatalogEntry) {
    const key = keyOf(e);
    return html`<button class="entry" type="button" aria-pressed=${this._picked === key ? 'true' : 'false'} @click=${() => ((this._picked = key), (this._values = {}))}>
      <span class="name">${e.name}</span>
      ${e.description ? html`<span class="desc">${e.description}</span>` : nothing}
      ${e.members?.length ? html`<span class="desc">${e.members.join(', ')}</span>` : nothing}
    </button>`;
  }

  #form() {
    const entry = this.#picked();
    if (!entry) return nothing;
    const parameters = Object.entries(entry.parameters ?? {});
    return html`<form @submit=${(e: Event) => (e.preventDefault(), void this.#start(entry))} aria-label=${`Start ${entry.name}`}>
      <label
        >${entry.kind === 'template' ? 'What is the run about? (optional)' : 'The task'}
        <textarea .value=${this._input} @input=${(e: Event) => (this._input = (e.target as HTMLTextAreaElement).value)} @keydown=${(e: KeyboardEvent) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void this.#start(entry);
          }
        }}></textarea>
      </label>
      ${parameters.map(
        ([name, p]) => html`<label
          >${name}${p.description ? ` — ${p.description}` : ''}${p.default === undefined ? ' (required)' : ''}
          ${p.enum
            ? html`<select @change=${(e: Event) => (this._values = { ...this._values, [name]: (e.target as HTMLSelectElement).value })}>${p.enum.map((v) => html`<option ?selected=${String(p.default) === String(v)}>${String(v)}</option>`)}</select>`
            : html`<input .value=${this._values[name] ?? (p.default === undefined ? '' : String(p.default))} @input=${(e: Event) => (this._values = { ...this._values, [name]: (e.target as HTMLInputElement).value })} />`}
        </label>`,
      )}
      <button class="primary" type="submit" ?disabled=${this._busy || (entry.kind !== 'template' && this._input.trim() === '')}>Start ${entry.name}</button>
    </form>`;
  }

  async #start(entry: CatalogEntry): Promise<void> {
    if (this._busy || (entry.kind !== 'template' && this._input.trim() === '')) return;
    this._busy = true;
    this._error = '';
    try {
      const input = this._input.trim() || `Run the ${entry.name} template`;
      const runId = await this.#api().start({ input, target: { kind: entry.kind, name: entry.name, ...(entry.kind === 'template' ? { values: this._values } : {}), ...(entry.source ? { source: entry.source } : {}) } });
      this._input = '';
      this.dispatchEvent(new CustomEvent('troupe-run-started', { detail: { runId, entry }, bubbles: true, composed: true }));
    } catch (error) {
      this._error = error instanceof Error ? error.message : String(error);
    } finally {
      this._busy = false;
    }
  }
}
