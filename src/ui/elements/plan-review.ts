/**
 * `<troupe-plan-review>`: the plan a person reviews before anything runs —
 * its chunks with their dependencies, roles and estimates — approved,
 * sent back with feedback, rejected, or edited first: a chunk's title or
 * prompt changed, chunks added, removed or rewired. The server checks an
 * edit as `PlanningSession.editPlan` does; a refused edit comes back as
 * the request's `error` and is shown here, with the edit kept.
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import { answerText } from '../troupe-events.js';
import type { PendingRequest, PlanChunkView, PlanView } from '../types.js';
import { theme } from './theme.js';

const ROLES = ['Generic', 'Planning', 'CodeAnalysis', 'MemoryDiagnostics', 'Performance', 'Testing', 'Implementation', 'Synthesis'];
const COMPLEXITIES = ['Low', 'Medium', 'High'];

/** A duration for people: `90 s`, `5 min`, `1.5 h`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** The plan review card. */
export class TroupePlanReview extends LitElement {
  static override properties = {
    request: { attribute: false },
    rev: { type: Number },
    theme: { type: String, reflect: true },
    _draft: { state: true },
    _feedback: { state: true },
  };
  static override styles = [
    theme,
    css`
      :host { display: block; }
      .card { border: 1px solid var(--_border); border-radius: var(--_radius); padding: 0.6rem 0.75rem; background: var(--_bg); }
      .summary { font-weight: 600; margin: 0 0 0.5rem; }
      ol { list-style: none; padding: 0; margin: 0; display: grid; gap: 0.4rem; }
      li { border: 1px solid var(--_border); border-radius: 8px; padding: 0.45rem 0.6rem; background: var(--_surface); }
      .row { display: flex; gap: 0.5rem; align-items: baseline; flex-wrap: wrap; }
      .index { font-family: var(--_mono); color: var(--_muted); }
      .title { font-weight: 600; }
      .tag { font-size: 0.75rem; border: 1px solid var(--_border); border-radius: 999px; padding: 0 0.45rem; color: var(--_muted); }
      details { margin-top: 0.25rem; font-size: 0.9rem; }
      summary { cursor: pointer; color: var(--_muted); }
      .prompt { white-space: pre-wrap; margin: 0.3rem 0 0; }
      .actions { display: flex; gap: 0.5rem; flex-wrap: wrap; margin-top: 0.6rem; }
      label { display: grid; gap: 0.15rem; font-size: 0.8rem; color: var(--_muted); }
      .edit { display: grid; gap: 0.4rem; grid-template-columns: 1fr 1fr; }
      .edit .wide { grid-column: 1 / -1; }
      textarea { min-height: 4.5rem; resize: vertical; }
      fieldset { border: 1px solid var(--_border); border-radius: 6px; padding: 0.3rem 0.5rem; margin: 0; }
      legend { font-size: 0.8rem; color: var(--_muted); }
      .deps { display: flex; gap: 0.6rem; flex-wrap: wrap; }
      .deps label { display: inline-flex; gap: 0.25rem; align-items: center; color: var(--_text); }
      .done { font-weight: 600; margin: 0.5rem 0 0; }
      .feedback { display: grid; gap: 0.4rem; margin-top: 0.6rem; }
    `,
  ];

  declare request: PendingRequest | undefined;
  /** Grows when the request changed (the same object, changed in place). */
  declare rev: number;
  declare theme: string | undefined;
  /** The plan being edited, or undefined while viewing. */
  declare _draft: PlanView | undefined;
  /** Feedback being written for "request changes", or undefined. */
  declare _feedback: string | undefined;

  override willUpdate(): void {
    if (this.request?.status === 'answered' || this.request?.status === 'withdrawn') this._draft = undefined;
  }

  #send(answer: Record<string, unknown>): void {
    if (!this.request) return;
    this.dispatchEvent(new CustomEvent('troupe-answer', { detail: { requestId: this.request.id, answer }, bubbles: true, composed: true }));
  }

  override render() {
    const r = this.request;
    const edited = r?.status === 'answered' ? (r.answer?.['plan'] as PlanView | undefined) : undefined;
    const plan = this._draft ?? edited ?? r?.plan;
    if (!r || !plan) return nothing;
    const open = r.status === 'pending';
    return html`<div class="card" role="group" aria-label="Plan review">
      <p class="summary">${plan.planSummary || 'The plan'}</p>
      ${this._draft ? this.#editor(this._draft) : this.#chunks(plan)}
      ${r.error ? html`<p class="error" role="alert">The edit was refused: ${r.error}</p>` : nothing}
      ${open ? this.#actions() : html`<p class="done">${r.status === 'sending' ? 'Sending…' : r.status === 'withdrawn' ? 'No longer asked.' : answerText('plan-approval', r.answer ?? {})}</p>`}
    </div>`;
  }

  #chunks(plan: PlanView) {
    return html`<ol aria-label="Chunks">
      ${plan.chunks.map(
        (c) => html`<li data-chunk=${c.sequenceIndex}>
          <div class="row">
            <span class="index">${c.sequenceIndex}.</span>
            <span class="title">${c.title}</span>
            <span class="tag">${c.role}</span>
            <span class="tag">${c.complexity}</span>
            ${c.estimatedMs !== undefined ? html`<span class="tag">~${duration(c.estimatedMs)}</span>` : nothing}
            <span class="muted">${c.dependsOnIndexes.length ? `after ${c.dependsOnIndexes.join(', ')}` : 'starts at once'}</span>
          </div>
          <details><summary>Prompt</summary><p class="prompt">${c.prompt}</p></details>
        </li>`,
      )}
    </ol>`;
  }

  #actions() {
    if (this._draft) {
      return html`<div class="actions">
        <button class="primary" type="button" @click=${() => this.#send({ decision: 'approve', plan: this._draft })}>Approve as edited</button>
        <button type="button" @click=${() => this.#addChunk()}>Add a chunk</button>
        <button type="button" @click=${() => (this._draft = undefined)}>Discard the edits</button>
      </div>`;
    }
    if (this._feedback !== undefined) {
      return html`<div class="feedback">
        <label>What should change?<textarea .value=${this._feedback} @input=${(e: Event) => (this._feedback = (e.target as HTMLTextAreaElement).value)}></textarea></label>
        <div class="actions">
          <button class="primary" type="button" ?disabled=${this._feedback.trim() === ''} @click=${() => this.#send({ decision: 'request-changes', feedback: this._feedback })}>Send the feedback</button>
          <button type="button" @click=${() => (this._feedback = undefined)}>Back</button>
        </div>
      </div>`;
    }
    return html`<div class="actions">
      <button class="primary" type="button" @click=${() => this.#send({ decision: 'approve' })}>Approve</button>
      <button type="button" @click=${() => (this._draft = structuredClone(this.request!.plan!))}>Edit</button>
      <button type="button" @click=${() => (this._feedback = '')}>Request changes</button>
      <button class="danger" type="button" @click=${() => this.#send({ decision: 'reject' })}>Reject</button>
    </div>`;
  }

  #editor(draft: PlanView) {
    const roles = this.request?.roles?.length ? this.request.roles : ROLES;
    return html`<ol aria-label="Chunks (editing)">
      ${draft.chunks.map((c, i) => html`<li data-chunk=${c.sequenceIndex}>${this.#chunkEditor(draft, c, i, roles)}</li>`)}
    </ol>`;
  }

  #chunkEditor(draft: PlanView, c: PlanChunkView, i: number, roles: readonly string[]) {
    const set = (patch: Partial<PlanChunkView>) => {
      const chunks = draft.chunks.map((x, k) => (k === i ? { ...x, ...patch } : x));
      this._draft = { ...draft, chunks };
    };
    const others = draft.chunks.filter((o) => o.sequenceIndex !== c.sequenceIndex);
    return html`<div class="edit">
      <label class="wide">Title of chunk ${c.sequenceIndex}<input .value=${c.title} @input=${(e: Event) => set({ title: (e.target as HTMLInputElement).value })} /></label>
      <label class="wide">Prompt of chunk ${c.sequenceIndex}<textarea .value=${c.prompt} @input=${(e: Event) => set({ prompt: (e.target as HTMLTextAreaElement).value })}></textarea></label>
      <label>Role<select @change=${(e: Event) => set({ role: (e.target as HTMLSelectElement).value })}>${roles.map((r) => html`<option ?selected=${r === c.role}>${r}</option>`)}</select></label>
      <label>Complexity<select @change=${(e: Event) => set({ complexity: (e.target as HTMLSelectElement).value })}>${COMPLEXITIES.map((x) => html`<option ?selected=${x === c.complexity}>${x}</option>`)}</select></label>
      <fieldset class="wide">
        <legend>Runs after</legend>
        <div class="deps">
          ${others.length === 0 ? html`<span class="muted">no other chunk</span>` : nothing}
          ${others.map(
            (o) => html`<label
              ><input
                type="checkbox"
                .checked=${c.dependsOnIndexes.includes(o.sequenceIndex)}
                @change=${(e: Event) => {
                  const on = (e.target as HTMLInputElement).checked;
                  set({ dependsOnIndexes: on ? [...c.dependsOnIndexes, o.sequenceIndex].sort((a, b) => a - b) : c.dependsOnIndexes.filter((d) => d !== o.sequenceIndex) });
                }}
              />${o.sequenceIndex}. ${o.title}</label
            >`,
          )}
        </div>
      </fieldset>
      <div class="wide"><button class="danger" type="button" aria-label=${`Remove chunk ${c.sequenceIndex}`} @click=${() => this.#removeChunk(c.sequenceIndex)}>Remove</button></div>
    </div>`;
  }

  #addChunk(): void {
    const draft = this._draft;
    if (!draft) return;
    const index = draft.chunks.reduce((max, c) => Math.max(max, c.sequenceIndex), -1) + 1;
    const role = this.request?.roles?.[0] ?? 'Generic';
    this._draft = { ...draft, chunks: [...draft.chunks, { sequenceIndex: index, title: 'New chunk', prompt: 'Describe what this chunk does.', dependsOnIndexes: [], complexity: 'Medium', role }] };
  }

  #removeChunk(index: number): void {
    const draft = this._draft;
    if (!draft) return;
    // Chunks that ran after it no longer wait for it.
    this._draft = { ...draft, chunks: draft.chunks.filter((c) => c.sequenceIndex !== index).map((c) => ({ ...c, dependsOnIndexes: c.dependsOnIndexes.filter((d) => d !== index) })) };
  }
}
