/**
 * `<troupe-app>`: the whole interface on one page, as `troupe dev` serves
 * it: the team picker and the run history beside the team chat. A run
 * picked, started or opened shows in the chat, and its id in the page's
 * address (`#run=<id>`), so a reload or a link opens it again.
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import type { Catalog } from '../types.js';
import { theme } from './theme.js';

const THEMES = ['auto', 'dark', 'light'] as const;

/** The interface of `troupe dev`. */
export class TroupeApp extends LitElement {
  static override properties = {
    endpoint: { type: String },
    token: { type: String },
    theme: { type: String, reflect: true },
    imageOrigins: { type: String, attribute: 'image-origins' },
    heading: { type: String },
    run: { type: String },
    _catalog: { state: true },
  };
  static override styles = [
    theme,
    css`
      :host { display: grid; grid-template-rows: auto 1fr; height: 100%; min-height: 0; background: var(--_bg); }
      header { display: flex; align-items: center; gap: 1rem; padding: 0.5rem 1rem; border-bottom: 1px solid var(--_border); background: var(--_surface); }
      h1 { font-size: 1.05rem; margin: 0; }
      header .where { color: var(--_muted); font-size: 0.85rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
      header button { margin-left: auto; }
      .body { display: grid; grid-template-columns: minmax(15rem, 22rem) 1fr; grid-template-rows: minmax(0, 1fr); min-height: 0; overflow: hidden; }
      nav { overflow-y: auto; padding: 0.75rem; border-right: 1px solid var(--_border); display: grid; gap: 1rem; align-content: start; }
      main { min-height: 0; padding: 0.75rem; display: flex; }
      troupe-team-chat { flex: 1; }
      @media (max-width: 760px) { .body { grid-template-columns: 1fr; grid-template-rows: auto minmax(0, 1fr); } nav { max-height: 40vh; border-right: 0; border-bottom: 1px solid var(--_border); } }
    `,
  ];

  declare endpoint: string;
  declare token: string | undefined;
  declare theme: string | undefined;
  declare imageOrigins: string;
  declare heading: string;
  declare run: string | undefined;
  declare _catalog: Catalog | undefined;

  constructor() {
    super();
    this.endpoint = '';
    this.imageOrigins = '';
    this.heading = 'troupe';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    const fromHash = new URLSearchParams(location.hash.slice(1)).get('run');
    if (fromHash && !this.run) this.run = fromHash;
  }

  #show(runId: string): void {
    this.run = runId;
    history.replaceState(null, '', `#run=${encodeURIComponent(runId)}`);
    void this.renderRoot.querySelector<HTMLElement & { refresh(): Promise<void> }>('troupe-run-history')?.refresh();
  }

  #status: string | undefined;

  /** The run history shows a run's end as soon as the chat sees it. */
  #onUpdate(status: string): void {
    if (status === this.#status) return;
    this.#status = status;
    if (status === 'completed' || status === 'failed' || status === 'cancelled') void this.renderRoot.querySelector<HTMLElement & { refresh(): Promise<void> }>('troupe-run-history')?.refresh();
  }

  #nextTheme(): void {
    const current = THEMES.indexOf((this.theme ?? 'auto') as (typeof THEMES)[number]);
    const next = THEMES[(current + 1) % THEMES.length]!;
    if (next === 'auto') this.removeAttribute('theme');
    this.theme = next === 'auto' ? undefined : next;
  }

  override render() {
    const c = this._catalog;
    const features = Object.entries(c?.features ?? { report: true })
      .filter(([, on]) => on)
      .map(([name]) => name)
      .join(' ');
    const t = this.theme ?? nothing;
    return html`<header>
        <h1>${this.heading}</h1>
        ${c ? html`<span class="where">${c.folder ?? ''}${c.adapter ? ` · adapter: ${c.adapter}` : ''}</span>` : nothing}
        <button type="button" aria-label=${`Theme: ${this.theme ?? 'as the system'}. Change it.`} @click=${() => this.#nextTheme()}>Theme: ${this.theme ?? 'auto'}</button>
      </header>
      <div class="body">
        <nav aria-label="Teams and runs">
          <troupe-team-picker endpoint=${this.endpoint} token=${this.token ?? nothing} theme=${t} @troupe-catalog=${(e: CustomEvent<Catalog>) => (this._catalog = e.detail)} @troupe-run-started=${(e: CustomEvent<{ runId: string }>) => this.#show(e.detail.runId)}></troupe-team-picker>
          <troupe-run-history endpoint=${this.endpoint} token=${this.token ?? nothing} features=${features} theme=${t} @troupe-open-run=${(e: CustomEvent<{ runId: string }>) => this.#show(e.detail.runId)}></troupe-run-history>
        </nav>
        <main>
          <troupe-team-chat endpoint=${this.endpoint} token=${this.token ?? nothing} run=${this.run ?? nothing} image-origins=${this.imageOrigins} theme=${t} @troupe-run-started=${(e: CustomEvent<{ runId: string }>) => this.#show(e.detail.runId)} @troupe-update=${(e: CustomEvent<{ status: string }>) => this.#onUpdate(e.detail.status)}></troupe-team-chat>
        </main>
      </div>`;
  }
}
