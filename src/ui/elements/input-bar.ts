/**
 * `<troupe-input-bar>`: where the person writes — a task, an answer to the
 * lead's question, or, in injection mode, an instruction to the running
 * workers. Enter sends, Shift+Enter starts a new line, Escape clears the
 * text and, pressed again on an empty box, stops the run. Disabled while
 * the planner or the aggregator works; the placeholder says what the box
 * is for in each phase.
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import { theme } from './theme.js';

/** What the box does now. */
export interface InputBarState {
  /** What Enter does: start a run, answer the question, send feedback on the plan, send a message (AG-UI), or nothing. */
  action: 'start' | 'answer' | 'feedback' | 'message' | 'instruct' | 'none';
  placeholder: string;
  /** Why the box is disabled, when it is. */
  busy?: string | undefined;
  /** Whether injection mode can be turned on (workers are running). */
  canInstruct: boolean;
  /** Whether a run can be stopped. */
  canCancel: boolean;
}

/** The input bar. */
export class TroupeInputBar extends LitElement {
  static override properties = {
    state: { attribute: false },
    theme: { type: String, reflect: true },
    _instruct: { state: true },
    _text: { state: true },
    _hint: { state: true },
  };
  static override styles = [
    theme,
    css`
      :host { display: block; }
      form { display: grid; gap: 0.4rem; padding: 0.6rem 0.75rem; border-top: 1px solid var(--_border); background: var(--_surface); }
      .row { display: flex; gap: 0.5rem; align-items: flex-end; }
      textarea { flex: 1; min-height: 2.6rem; max-height: 12rem; resize: vertical; }
      textarea.instruct { border-color: var(--_injection); border-width: 2px; }
      .under { display: flex; justify-content: space-between; gap: 0.75rem; font-size: 0.8rem; color: var(--_muted); flex-wrap: wrap; }
      .toggle { display: inline-flex; gap: 0.35rem; align-items: center; color: var(--_text); }
      .toggle.on { color: var(--_injection); font-weight: 600; }
    `,
  ];

  declare state: InputBarState;
  declare theme: string | undefined;
  declare _instruct: boolean;
  declare _text: string;
  declare _hint: string;
  #escapeAt = 0;

  constructor() {
    super();
    this.state = { action: 'none', placeholder: '', canInstruct: false, canCancel: false };
    this._instruct = false;
    this._text = '';
    this._hint = '';
  }

  /** Put the cursor in the box. */
  override focus(): void {
    this.renderRoot.querySelector('textarea')?.focus();
  }

  #instructing(): boolean {
    return this._instruct && this.state.canInstruct && this.state.action !== 'answer';
  }

  #send(): void {
    const text = this._text.trim();
    if (text === '' || this.state.busy) return;
    const instruction = this.#instructing();
    if (!instruction && this.state.action === 'none') return;
    this.dispatchEvent(new CustomEvent('troupe-send', { detail: { text, instruction, action: instruction ? 'instruct' : this.state.action }, bubbles: true, composed: true }));
    this._text = '';
  }

  #keydown(event: KeyboardEvent): void {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.#send();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      if (this._text !== '') {
        this._text = '';
        this._hint = 'Cleared.';
      } else if (this.state.canCancel) {
        const now = Date.now();
        if (now - this.#escapeAt < 3000) {
          this.#escapeAt = 0;
          this._hint = 'Stopping the run…';
          this.dispatchEvent(new CustomEvent('troupe-cancel', { bubbles: true, composed: true }));
        } else {
          this.#escapeAt = now;
          this._hint = 'Press Escape again to stop the run.';
        }
      }
    }
  }

  override render() {
    const s = this.state;
    const instructing = this.#instructing();
    const placeholder = instructing ? 'Tell the running workers something (they get it at their next turn)…' : s.placeholder;
    return html`<form @submit=${(e: Event) => (e.preventDefault(), this.#send())}>
      <div class="row">
        <label class="visually-hidden" for="box">${instructing ? 'Instruction to the running workers' : 'Message'}</label>
        <textarea
          id="box"
          class=${instructing ? 'instruct' : ''}
          rows="2"
          .value=${this._text}
          placeholder=${placeholder}
          ?disabled=${s.busy !== undefined}
          aria-describedby="keys"
          @input=${(e: Event) => (this._text = (e.target as HTMLTextAreaElement).value)}
          @keydown=${(e: KeyboardEvent) => this.#keydown(e)}
        ></textarea>
        <button class="primary" type="submit" ?disabled=${s.busy !== undefined || this._text.trim() === '' || (s.action === 'none' && !instructing)}>${instructing ? 'Instruct' : s.action === 'answer' ? 'Answer' : s.action === 'start' ? 'Start' : s.action === 'feedback' ? 'Ask for changes' : 'Send'}</button>
        ${s.canCancel ? html`<button class="danger" type="button" @click=${() => this.dispatchEvent(new CustomEvent('troupe-cancel', { bubbles: true, composed: true }))}>Stop</button>` : nothing}
      </div>
      <div class="under">
        ${s.canInstruct
          ? html`<label class="toggle ${instructing ? 'on' : ''}"><input type="checkbox" .checked=${this._instruct} @change=${(e: Event) => (this._instruct = (e.target as HTMLInputElement).checked)} />Instruct the running workers</label>`
          : html`<span>${s.busy ?? ''}</span>`}
        <span id="keys">Enter sends · Shift+Enter: new line · Escape clears${s.canCancel ? ', twice stops the run' : ''}</span>
        <span class="visually-hidden" role="status">${this._hint}</span>
      </div>
    </form>`;
  }
}
