/**
 * `<troupe-run-history>`: the runs of the store, newest first, each opened
 * in the chat (`troupe-open-run`), or shown as its report, replayed or
 * forked at a checkpoint (when the server offers them: `features`).
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import { runStatusText } from '../model.js';
import type { CheckpointSummary, RunSummary } from '../types.js';
import { TroupeApi } from './client.js';
import { theme } from './theme.js';

/** The run history. */
export class TroupeRunHistory extends LitElement {
  static override properties = {
    endpoint: { type: String },
    token: { type: String },
    features: { type: String },
    theme: { type: String, reflect: true },
    headers: { attribute: false },
    _runs: { state: true },
    _error: { state: true },
    _forking: { state: true },
    _checkpoints: { state: true },
    _forkAt: { state: true },
  };
  static override styles = [
    theme,
    css`
      :host { display: block; }
      .head { display: flex; justify-content: space-between; align-items: center; gap: 0.5rem; }
      h2 { font-size: 1rem; margin: 0.25rem 0; }
      ol { list-style: none; padding: 0; margin: 0.4rem 0 0; display: grid; gap: 0.4rem; }
      li { border: 1px solid var(--_border); border-radius: 8px; padding: 0.4rem 0.55rem; background: var(--_surface); }
      .name { font-weight: 600; overflow-wrap: anywhere; }
      .meta { font-size: 0.78rem; color: var(--_muted); }
      .actions { display: flex; gap: 0.3rem; flex-wrap: wrap; margin-top: 0.3rem; }
      .actions button, .actions a { font-size: 0.8rem; padding: 0.15rem 0.5rem; }
      a { color: var(--_accent); border: 1px solid var(--_border); border-radius: 8px; text-decoration: none; background: var(--_surface-2); }
      .fork { display: flex; gap: 0.3rem; align-items: center; margin-top: 0.3rem; flex-wrap: wrap; }
      select { max-width: 100%; font-size: 0.8rem; }
    `,
  ];

  declare endpoint: string;
  declare token: string | undefined;
  /** What the server offers besides opening a run: `report`, `replay`, `fork` (space-separated). Default: `report`. */
  declare features: string;
  declare theme: string | undefined;
  declare headers: Record<string, string> | undefined;
  declare _runs: RunSummary[];
  declare _error: string;
  declare _forking: string | undefined;
  declare _checkpoints: CheckpointSummary[];
  /** The checkpoint picked in the fork form (kept when the list is drawn again). */
  declare _forkAt: number | undefined;

  constructor() {
    super();
    this.endpoint = '';
    this.features = 'report';
    this._runs = [];
    this._error = '';
    this._checkpoints = [];
  }

  #api(): TroupeApi {
    return new TroupeApi({ endpoint: this.endpoint, token: this.token, headers: this.headers });
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.refresh();
  }

  /** Read the runs again. */
  async refresh(): Promise<void> {
    if (!this.endpoint) return;
    try {
      this._runs = (await this.#api().runs()).sort((a, b) => b.startedAt - a.startedAt);
      this._error = '';
    } catch (error) {
      this._error = error instanceof Error ? error.message : String(error);
    }
  }

  #open(runId: string): void {
    this.dispatchEvent(new CustomEvent('troupe-open-run', { detail: { runId }, bubbles: true, composed: true }));
  }

  async #act(work: () => Promise<string>): Promise<void> {
    try {
      const runId = await work();
      this._forking = undefined;
      await this.refresh();
      this.#open(runId);
    } catch (error) {
      this._error = error instanceof Error ? error.message : String(error);
    }
  }

  async #startFork(runId: string): Promise<void> {
    this._forking = runId;
    this._checkpoints = [];
    this._forkAt = undefined;
    try {
      this._checkpoints = await this.#api().checkpoints(runId);
    } catch (error) {
      this._error = error instanceof Error ? error.message : String(error);
    }
  }

  override render() {
    const has = new Set(this.features.split(/\s+/));
    return html`<section aria-labelledby="history-title">
      <div class="head"><h2 id="history-title">Runs</h2><button type="button" @click=${() => void this.refresh()}>Refresh</button></div>
      ${this._error ? html`<p class="error" role="alert">${this._error}</p>` : nothing}
      ${this._runs.length === 0 ? html`<p class="muted">No runs yet.</p>` : nothing}
      <ol>
        ${this._runs.map((run) => this.#run(run, has))}
      </ol>
    </section>`;
  }

  #run(run: RunSummary, has: Set<string>) {
    const title = typeof run.input === 'string' && run.input ? run.input : run.runnable ?? run.runId;
    const status = runStatusText(run);
    // A planning session is driven by a person: it is opened, not run again.
    const again = run.endedAt !== undefined && run.runnable !== 'planning-session';
    return html`<li data-run=${run.runId}>
      <div class="name">${title.length > 90 ? `${title.slice(0, 90)}…` : title}</div>
      <div class="meta">${run.runnable ?? ''} · ${status} · ${new Date(run.startedAt).toLocaleString()}${run.parent ? ` · from ${run.parent.runId}` : ''}</div>
      <div class="actions">
        <button type="button" aria-label=${`Open run ${run.runId}`} @click=${() => this.#open(run.runId)}>Open</button>
        ${has.has('report') ? html`<a href=${this.#api().reportUrl(run.runId)} target="_blank" rel="noopener" aria-label=${`Report of run ${run.runId} (opens a new tab)`}>Report</a>` : nothing}
        ${has.has('replay') && again ? html`<button type="button" aria-label=${`Replay run ${run.runId}`} @click=${() => void this.#act(() => this.#api().replay(run.runId))}>Replay</button>` : nothing}
        ${has.has('fork') && again ? html`<button type="button" aria-label=${`Fork run ${run.runId}`} @click=${() => void this.#startFork(run.runId)}>Fork…</button>` : nothing}
      </div>
      ${this._forking === run.runId ? this.#forkForm(run.runId) : nothing}
    </li>`;
  }

  #forkForm(runId: string) {
    if (this._checkpoints.length === 0) return html`<p class="muted">No checkpoint to fork from.</p>`;
    const chosen = this._forkAt ?? this._checkpoints.at(-1)!.index;
    return html`<div class="fork">
      <label
        >Checkpoint
        <select @change=${(e: Event) => (this._forkAt = Number((e.target as HTMLSelectElement).value))}>
          ${this._checkpoints.map((c) => html`<option value=${c.index} ?selected=${c.index === chosen}>${c.index}. ${c.kind} ${c.name}${c.finished ? ' (finished)' : ''}</option>`)}
        </select></label
      >
      <button class="primary" type="button" @click=${() => void this.#act(() => this.#api().fork(runId, chosen))}>Fork here</button>
      <button type="button" @click=${() => (this._forking = undefined)}>Cancel</button>
    </div>`;
  }
}
