/**
 * `<troupe-worker-bar>`: one pill per working chunk or worker, with its
 * status, title and progress. The bar appears when work starts and hides
 * `hide-after` ms (2000) after the last worker ends; a pill's click asks
 * the chat to show that worker's latest message (`troupe-worker-select`).
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import { styleProps } from './style-props.js';
import { WORKING } from '../model.js';
import type { WorkerState } from '../types.js';
import { theme, workerColour } from './theme.js';

const LABELS: Record<string, string> = {
  pending: 'waiting',
  'waiting-for-dependencies': 'waiting for its dependencies',
  queued: 'queued',
  running: 'working',
  retrying: 'retrying',
  completed: 'done',
  failed: 'failed',
  skipped: 'skipped',
  cancelled: 'stopped',
};

/** The worker bar. */
export class TroupeWorkerBar extends LitElement {
  static override properties = {
    workers: { attribute: false },
    hideAfter: { type: Number, attribute: 'hide-after' },
    theme: { type: String, reflect: true },
    now: { attribute: false },
    _shown: { state: true },
  };
  static override styles = [
    theme,
    css`
      :host { display: block; }
      .bar { display: flex; gap: 0.5rem; flex-wrap: wrap; padding: 0.5rem 0.75rem; border-bottom: 1px solid var(--_border); background: var(--_surface); }
      ul { display: contents; list-style: none; }
      li { display: contents; }
      .pill { display: inline-flex; flex-direction: column; gap: 0.2rem; min-width: 10rem; max-width: 20rem; text-align: left; border-left: 4px solid var(--_c); background: var(--_bg); padding: 0.3rem 0.6rem; }
      .top { display: flex; width: 100%; gap: 0.4rem; align-items: baseline; justify-content: space-between; }
      .title { font-weight: 600; font-size: 0.85rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
      .status { font-size: 0.75rem; color: var(--_muted); white-space: nowrap; }
      .status.failed { color: var(--_danger); }
      .status.completed { color: var(--_success); }
      .track { display: block; height: 4px; background: var(--_surface-2); border-radius: 2px; overflow: hidden; }
      .fill { display: block; height: 100%; background: var(--_c); width: var(--_w, 30%); }
      .indeterminate .fill { animation: slide 1.4s ease-in-out infinite; }
      @keyframes slide { from { transform: translateX(-100%); } to { transform: translateX(340%); } }
      .summary { align-self: center; font-size: 0.8rem; color: var(--_muted); margin-left: auto; }
    `,
  ];

  declare workers: readonly WorkerState[];
  declare hideAfter: number;
  declare theme: string | undefined;
  /** The time to measure progress at (the chat passes its clock). */
  declare now: number;
  declare _shown: boolean;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    this.workers = [];
    this.hideAfter = 2000;
    this.now = Date.now();
    this._shown = false;
  }

  override willUpdate(): void {
    const working = this.workers.some((w) => WORKING.has(w.status) && w.status !== 'queued');
    if (working) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this._shown = true;
    } else if (this._shown && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this._shown = false;
      }, this.hideAfter);
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** True while the bar shows. */
  get shown(): boolean {
    return this._shown;
  }

  override render() {
    if (!this._shown) return nothing;
    const started = this.workers.filter((w) => w.status !== 'pending' && w.status !== 'waiting-for-dependencies');
    const done = started.filter((w) => w.status === 'completed').length;
    return html`<div class="bar" role="region" aria-label="Workers">
      <ul aria-label="Workers at work">
        ${started.map((w) => html`<li>${this.#pill(w)}</li>`)}
      </ul>
      <span class="summary" aria-live="polite">${done} of ${started.length} done</span>
    </div>`;
  }

  #pill(worker: WorkerState) {
    const progress = this.#progress(worker);
    const label = LABELS[worker.status] ?? worker.status;
    const title = worker.role && worker.role !== worker.title ? `${worker.role} · ${worker.title}` : worker.title;
    const detail = worker.status === 'running' ? (worker.turns > 0 ? `turn ${worker.turns + 1}` : 'starting') : label;
    return html`<button
      class="pill"
      type="button"
      data-worker=${worker.key}
      data-status=${worker.status}
      ${styleProps({ '--_c': workerColour(worker.colour) })}
      aria-label=${`${title}: ${label}${worker.status === 'running' ? `, ${detail}` : ''}. Show its latest message.`}
      @click=${() => this.dispatchEvent(new CustomEvent('troupe-worker-select', { detail: { key: worker.key }, bubbles: true, composed: true }))}
    >
      <span class="top"><span class="title">${title}</span><span class="status ${worker.status}">${worker.status === 'running' ? detail : label}</span></span>
      <span
        class="track ${progress === undefined ? 'indeterminate' : ''}"
        role="progressbar"
        aria-label=${`Progress of ${title}`}
        aria-valuemin="0"
        aria-valuemax="100"
        aria-valuenow=${progress === undefined ? nothing : Math.round(progress * 100)}
        ><span class="fill" ${styleProps(progress === undefined ? {} : { '--_w': `${Math.round(progress * 100)}%` })}></span
      ></span>
    </button>`;
  }

  /** Done: 1; working with an estimate: the time spent over it (at most 95%); else unknown. */
  #progress(worker: WorkerState): number | undefined {
    if (!WORKING.has(worker.status)) return 1;
    if (worker.estimatedMs === undefined || worker.startedAt === undefined) return undefined;
    return Math.min(0.95, Math.max(0, (this.now - worker.startedAt) / worker.estimatedMs));
  }
}
