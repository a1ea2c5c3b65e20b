/**
 * `<troupe-team-chat>`: a team at work, and the person steering it. It
 * follows one run — troupe's event stream (`protocol="troupe"`, the
 * default: `endpoint` is the base of `troupe/http`'s routes) or an AG-UI
 * endpoint (`protocol="ag-ui"`) — and shows one card per message, the
 * worker bar, requests answered in place, and the input bar.
 *
 * Thousands of messages stay smooth: events are applied once per frame,
 * the list is virtualised (only cards on screen are rendered, and rich
 * rendering happens only for them), the list follows new messages only
 * when the reader is at its end, and at most `max-messages` are kept.
 * @module
 */
import { LitElement, css, html, nothing } from 'lit';
import { ref } from 'lit/directives/ref.js';
import { styleProps } from './style-props.js';
import { AguiEventReader } from '../agui-events.js';
import { ChatModel } from '../model.js';
import { TroupeEventReader } from '../troupe-events.js';
import type { ChatMessage, PendingRequest, RunStatus } from '../types.js';
import { TroupeApi, UiRequestError, runAgui, type AguiRequest, type StartRequest } from './client.js';
import type { InputBarState } from './input-bar.js';
import { MarkdownCache, messageStyles, messageTemplate } from './message-view.js';
import { theme } from './theme.js';
import { VirtualList } from './virtual.js';

const PLACEHOLDERS: Record<string, string> = {
  idle: 'Describe the task for the team…',
  clarifying: 'Answer the lead’s questions…',
  planning: 'The lead is planning…',
  'awaiting-approval': 'Review the plan above, or tell the lead what to change…',
  executing: 'The team is at work. Turn on “Instruct the running workers” to steer them…',
  aggregating: 'The lead is putting the results together…',
  completed: 'Start a new task…',
  cancelled: 'Start a new task…',
};

/** The team chat. */
export class TroupeTeamChat extends LitElement {
  static override properties = {
    endpoint: { type: String },
    run: { type: String, reflect: true },
    protocol: { type: String },
    token: { type: String },
    maxMessages: { type: Number, attribute: 'max-messages' },
    imageOrigins: { type: String, attribute: 'image-origins' },
    theme: { type: String, reflect: true },
    readonly: { type: Boolean, reflect: true },
    headers: { attribute: false },
    target: { attribute: false },
    _turnsOf: { state: true },
    _focus: { state: true },
    _notice: { state: true },
  };
  static override styles = [
    theme,
    messageStyles,
    css`
      :host { display: flex; flex-direction: column; min-height: 0; height: 100%; background: var(--_bg); border: 1px solid var(--_border); border-radius: var(--_radius); overflow: hidden; position: relative; }
      .status { display: flex; gap: 0.75rem; align-items: center; padding: 0.4rem 0.75rem; border-bottom: 1px solid var(--_border); font-size: 0.85rem; color: var(--_muted); }
      .status strong { color: var(--_text); }
      .dot { width: 0.55rem; height: 0.55rem; border-radius: 50%; background: var(--_muted); }
      .dot.running, .dot.waiting { background: var(--_success); } .dot.failed { background: var(--_danger); } .dot.reconnecting { background: var(--_warning); }
      .scroller { flex: 1; overflow-y: auto; overflow-anchor: none; position: relative; contain: strict; min-height: 8rem; }
      .feed { position: relative; width: 100%; }
      .row { position: absolute; top: 0; left: 0; width: 100%; padding: 0.3rem 0; }
      .empty { padding: 2rem; text-align: center; color: var(--_muted); }
      .jump { position: absolute; right: 1rem; bottom: 6rem; z-index: 2; }
      .turns-panel { position: absolute; inset: 3rem 1rem auto auto; width: min(36rem, calc(100% - 2rem)); z-index: 3; box-shadow: 0 8px 32px rgb(0 0 0 / 25%); border-radius: var(--_radius); }
    `,
  ];

  declare endpoint: string;
  declare run: string | undefined;
  declare protocol: 'troupe' | 'ag-ui';
  declare token: string | undefined;
  declare maxMessages: number;
  declare imageOrigins: string;
  declare theme: string | undefined;
  declare readonly: boolean;
  /** Extra headers of every request (not of troupe's event stream, which `EventSource` sends without). */
  declare headers: Record<string, string> | undefined;
  /** What a run started from the input bar runs (`troupe dev`'s catalogue entries); default: the server's. */
  declare target: StartRequest['target'];
  declare _turnsOf: string | undefined;
  declare _focus: number;
  declare _notice: string;

  #model = new ChatModel();
  #troupe = new TroupeEventReader(this.#model);
  #agui = new AguiEventReader(this.#model);
  #queue: Array<{ seq: number | undefined; event: unknown; agui: boolean }> = [];
  #frame: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stop: (() => void) | undefined;
  #abort: AbortController | undefined;
  #following: string | undefined;
  #cache = new MarkdownCache();
  #staleTimer: ReturnType<typeof setTimeout> | undefined;
  #scroller: HTMLElement | null = null;
  #seen = 0;
  /** The person just acted: follow the end of the chat again. */
  #stick = false;
  /** Measures a row when it is first drawn (a resize observer follows it after that). */
  readonly #measureRow = (el: Element | undefined): void => {
    if (el) this.#virtual.virtualizer.measureElement(el as HTMLElement);
  };
  #virtual = new VirtualList(this, {
    count: () => this.#model.messages.length,
    key: (i) => this.#model.messages[i]?.id ?? String(i),
    scrollElement: () => this.#scroller,
  });

  constructor() {
    super();
    this.#cache.onStale = () => {
      this.#staleTimer ??= setTimeout(() => {
        this.#staleTimer = undefined;
        this.requestUpdate();
      }, 130);
    };
    this.endpoint = '';
    this.protocol = 'troupe';
    this.maxMessages = 5000;
    this.imageOrigins = '';
    this.readonly = false;
    this._focus = -1;
    this._notice = '';
  }

  /** The chat's state (messages, workers, requests, turns): read it, do not change it. */
  get model(): ChatModel {
    return this.#model;
  }

  #api(): TroupeApi {
    return new TroupeApi({ endpoint: this.endpoint, token: this.token, headers: this.headers });
  }

  override updated(): void {
    this.#keepFocus();
    if (!this.#stick || this.#model.messages.length === 0) return;
    this.#stick = false;
    this.#virtual.virtualizer.scrollToEnd();
  }

  /** The card the keyboard moved to, while the keyboard is in the feed (see {@link #keepFocus}). */
  #keyboardCard: number | undefined;

  /**
   * Rows are drawn again as the list scrolls, and a card drawn again loses
   * the focus: give it back to the card the keyboard moved to, unless the
   * person has put the focus somewhere else.
   */
  #keepFocus(): void {
    const index = this.#keyboardCard;
    if (index === undefined || this.renderRoot instanceof ShadowRoot === false) return;
    const root = this.renderRoot as ShadowRoot;
    if (root.activeElement !== null || (document.activeElement !== document.body && document.activeElement !== this)) return;
    root.querySelector<HTMLElement>(`.row[data-index="${index}"] article`)?.focus({ preventScroll: true });
  }

  /** Follow the end again (after the person acted). */
  #toEnd(): void {
    this.#stick = true;
    this.requestUpdate();
  }

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('maxMessages') && this.#model.maxMessages !== this.maxMessages && this.#model.messages.length === 0) this.#reset();
    if ((changed.has('run') || changed.has('endpoint') || changed.has('protocol')) && this.run !== this.#following) this.#follow();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#staleTimer);
    this.#staleTimer = undefined;
    this.#unfollow();
    this.#following = undefined;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.run && this.#following === undefined && this.hasUpdated) this.#follow();
  }

  #reset(): void {
    this.#model = new ChatModel({ maxMessages: this.maxMessages });
    this.#troupe = new TroupeEventReader(this.#model);
    this.#agui = new AguiEventReader(this.#model);
    this.#queue = [];
    this.#cache.clear();
    this.#seen = 0;
  }

  #unfollow(): void {
    this.#stop?.();
    this.#stop = undefined;
    this.#abort?.abort();
    this.#abort = undefined;
  }

  /** Follow `run` from the start (a new run, or another one). */
  #follow(): void {
    this.#unfollow();
    this.#reset();
    this.#following = this.run;
    if (!this.run || !this.endpoint) return this.requestUpdate();
    this.#model.runId = this.run;
    if (this.protocol === 'ag-ui') return this.requestUpdate();
    this.#model.status = 'connecting';
    this.#stop = this.#api().follow(
      this.run,
      (seq, event) => this.#enqueue(seq, event, false),
      (state) => {
        if (state === 'reconnecting' && !['completed', 'failed', 'cancelled'].includes(this.#model.status)) this.#model.status = 'reconnecting';
        if (state === 'open' && (this.#model.status === 'reconnecting' || this.#model.status === 'connecting')) this.#model.status = this.#model.pending().length ? 'waiting' : 'running';
        if (state === 'closed') this.#stop?.();
        this.requestUpdate();
      },
    );
    this.requestUpdate();
  }

  /**
   * Apply events as if they came from the stream: troupe events with their
   * log positions, or AG-UI events (`agui: true`). For pages that read a
   * stream themselves, and for tests.
   */
  ingest(events: ReadonlyArray<{ seq?: number; event: unknown }>, options: { agui?: boolean } = {}): void {
    for (const { seq, event } of events) this.#enqueue(seq, event, options.agui === true);
  }

  #enqueue(seq: number | undefined, event: unknown, agui: boolean): void {
    this.#queue.push({ seq, event, agui });
    if (this.#frame !== undefined || this.#timer !== undefined) return;
    // Once per frame; a hidden page gets no frames, so a timer stands in.
    this.#frame = requestAnimationFrame(() => this.#flush());
    this.#timer = setTimeout(() => this.#flush(), 250);
  }

  #flush(): void {
    if (this.#frame !== undefined) cancelAnimationFrame(this.#frame);
    clearTimeout(this.#timer);
    this.#frame = undefined;
    this.#timer = undefined;
    const batch = this.#queue;
    this.#queue = [];
    for (const { seq, event, agui } of batch) {
      if (agui) this.#agui.apply(event);
      else this.#troupe.apply(seq, event);
    }
    this.#announce();
    this.requestUpdate();
    this.dispatchEvent(new CustomEvent('troupe-update', { detail: { status: this.#model.status, phase: this.#model.phase } }));
  }

  /** Tell screen readers what arrived (at most one line per batch). */
  #announce(): void {
    const messages = this.#model.messages;
    const fresh = messages.slice(Math.max(0, messages.length - (this.#model.messages.length + this.#model.dropped - this.#seen)));
    this.#seen = this.#model.messages.length + this.#model.dropped;
    const last = fresh.filter((m) => m.source !== 'system').at(-1);
    if (!last) return;
    this._notice = fresh.length === 1 ? `${last.author}: ${last.kind === 'request' ? 'waits for you' : last.text.slice(0, 140)}` : `${fresh.length} new messages, the last from ${last.author}`;
  }

  override render() {
    const model = this.#model;
    return html`${this.#statusLine()}
      <troupe-worker-bar .workers=${[...model.workers.values()]} .now=${Date.now()} theme=${this.theme ?? nothing} @troupe-worker-select=${(e: CustomEvent<{ key: string }>) => this.scrollToWorker(e.detail.key)}></troupe-worker-bar>
      <div class="scroller" ${ref((el) => (this.#scroller = (el as HTMLElement | undefined) ?? null))} @keydown=${(e: KeyboardEvent) => this.#feedKeys(e)} @focusout=${(e: FocusEvent) => this.#feedLeft(e)} @troupe-answer=${(e: CustomEvent<{ requestId: string; answer: Record<string, unknown> }>) => void this.answer(e.detail.requestId, e.detail.answer)}>
        ${model.messages.length === 0
          ? html`<p class="empty">${this.run ? 'Waiting for the team…' : 'No run yet: describe a task below.'}</p>`
          : html`<div class="feed" role="feed" aria-label="Team chat" aria-busy=${model.status === 'connecting' ? 'true' : 'false'} ${styleProps({ height: `${this.#virtual.size()}px` })}>
              ${this.#virtual.items().map((item) => this.#row(model.messages[item.index], item.index, item.start))}
            </div>`}
      </div>
      ${!this.#virtual.atEnd() && model.messages.length > 0 ? html`<button class="jump" type="button" @click=${() => this.#virtual.virtualizer.scrollToEnd()}>Jump to the latest</button>` : nothing}
      ${this._turnsOf ? this.#turnsPanel(this._turnsOf) : nothing}
      ${this.readonly ? nothing : html`<troupe-input-bar .state=${this.#inputState()} theme=${this.theme ?? nothing} @troupe-send=${(e: CustomEvent<{ text: string; instruction: boolean; action: string }>) => void this.#onSend(e.detail)} @troupe-cancel=${() => void this.cancel()}></troupe-input-bar>`}
      <div class="visually-hidden" role="status" aria-live="polite">${this._notice}</div>`;
  }

  #row(message: ChatMessage | undefined, index: number, start: number) {
    if (!message) return nothing;
    const count = this.#model.messages.length;
    const focused = this._focus === index || (this._focus < 0 && index === count - 1);
    return html`<div class="row" data-index=${index} ${styleProps({ transform: `translateY(${start}px)` })} ${ref(this.#measureRow)}>
      ${messageTemplate(message, {
        model: this.#model,
        cache: this.#cache,
        render: { imageOrigins: this.imageOrigins.split(/\s+/).filter(Boolean), highlight: true },
        theme: this.theme,
        index,
        count,
        focused,
        scrolling: this.#virtual.scrolling(),
        onTurns: (key) => (this._turnsOf = key),
      })}
    </div>`;
  }

  #statusLine() {
    const m = this.#model;
    const labels: Record<RunStatus, string> = { idle: 'No run', connecting: 'Connecting…', running: 'Running', waiting: 'Waiting for you', reconnecting: 'Reconnecting…', completed: 'Completed', failed: 'Failed', cancelled: 'Cancelled' };
    return html`<div class="status">
      <span class="dot ${m.status}" aria-hidden="true"></span>
      <strong>${labels[m.status]}</strong>
      ${m.phase ? html`<span>phase: ${m.phase}</span>` : nothing}
      ${m.runId ? html`<span>run ${m.runId}</span>` : nothing}
      ${m.dropped ? html`<span>${m.dropped} older messages not kept</span>` : nothing}
    </div>`;
  }

  #turnsPanel(key: string) {
    const worker = this.#model.workers.get(key);
    const heading = `Turns of ${worker ? (worker.role ? `${worker.role} · ${worker.title}` : worker.title) : key}`;
    return html`<troupe-worker-turns class="turns-panel" .turns=${this.#model.turns.filter((t) => t.workerKey === key)} heading=${heading} theme=${this.theme ?? nothing} @troupe-close=${() => (this._turnsOf = undefined)}></troupe-worker-turns>`;
  }

  /** Keyboard moves between cards (the feed pattern): arrows and Page Up/Down one card, Home and End to the first and last. */
  /** The person moved the focus out of the feed: the feed no longer keeps it (a card drawn again has none to give back). */
  #feedLeft(event: FocusEvent): void {
    const to = event.relatedTarget as Node | null;
    if (to !== null && !this.#scroller?.contains(to)) this.#keyboardCard = undefined;
  }

  #feedKeys(event: KeyboardEvent): void {
    const target = event.target as HTMLElement;
    if (!target.matches?.('article.msg')) return;
    const count = this.#model.messages.length;
    const current = this._focus < 0 ? count - 1 : this._focus;
    const moves: Record<string, number> = { ArrowDown: current + 1, PageDown: current + 1, ArrowUp: current - 1, PageUp: current - 1, Home: 0, End: count - 1 };
    const next = moves[event.key];
    if (next === undefined) return;
    event.preventDefault();
    this.focusMessage(Math.max(0, Math.min(count - 1, next)));
  }

  /** Scroll to message `index` and focus its card. */
  async focusMessage(index: number): Promise<void> {
    this._focus = index;
    this.#keyboardCard = index;
    // A far jump lands on estimated row heights: scroll again each frame until the card is drawn.
    for (let attempt = 0; attempt < 60; attempt++) {
      this.#virtual.virtualizer.scrollToIndex(index, { align: 'auto' });
      await this.updateComplete;
      const card = this.renderRoot.querySelector<HTMLElement>(`.row[data-index="${index}"] article`);
      if (card) return card.focus({ preventScroll: true });
      await nextFrame();
    }
  }

  /** Show worker `key`'s latest message. */
  scrollToWorker(key: string): void {
    const id = this.#model.workers.get(key)?.lastMessageId;
    const index = id === undefined ? -1 : this.#model.messages.findIndex((m) => m.id === id);
    if (index >= 0) void this.focusMessage(index);
  }

  #inputState(): InputBarState {
    const m = this.#model;
    const question = m.pending().find((r) => r.kind === 'question');
    const ended = this.#ended();
    const live = !!this.run && !ended && m.status !== 'idle';
    const canCancel = live && this.protocol === 'troupe';
    if (question) return { action: 'answer', placeholder: PLACEHOLDERS['clarifying']!, canInstruct: false, canCancel };
    if (this.protocol === 'ag-ui') return { action: m.status === 'running' ? 'none' : 'message', placeholder: 'Write to the agent…', busy: m.status === 'running' ? 'The agent is answering…' : undefined, canInstruct: false, canCancel: false };
    if (!this.run || ended) return { action: this.endpoint ? 'start' : 'none', placeholder: PLACEHOLDERS[ended ? 'completed' : 'idle']!, canInstruct: false, canCancel: false };
    const plan = m.pending().find((r) => r.kind === 'plan-approval');
    if (plan) return { action: 'feedback', placeholder: PLACEHOLDERS['awaiting-approval']!, canInstruct: false, canCancel };
    const phase = m.phase ?? 'executing';
    const busy = phase === 'planning' ? 'The lead is planning…' : phase === 'aggregating' ? 'The lead is putting the results together…' : undefined;
    return { action: 'none', placeholder: PLACEHOLDERS[phase] ?? PLACEHOLDERS['executing']!, busy, canInstruct: m.working().length > 0, canCancel };
  }

  async #onSend(detail: { text: string; instruction: boolean; action: string }): Promise<void> {
    this.#toEnd();
    try {
      if (detail.instruction) await this.instruct(detail.text);
      else if (detail.action === 'answer') {
        const question = this.#model.pending().find((r) => r.kind === 'question');
        if (question) await this.answer(question.id, { text: detail.text });
      } else if (detail.action === 'feedback') {
        const plan = this.#model.pending().find((r) => r.kind === 'plan-approval');
        if (plan) await this.answer(plan.id, { decision: 'request-changes', feedback: detail.text });
      } else if (detail.action === 'message') {
        if (this.run) await this.#aguiSend({ text: detail.text });
        else await this.start(detail.text);
      }
      else if (detail.action === 'start') await this.start(detail.text, this.target);
    } catch (error) {
      this.#model.add({ source: 'system', author: 'troupe', time: Date.now(), kind: 'error', text: error instanceof Error ? error.message : String(error) });
      this.requestUpdate();
    }
  }

  /** Start a run with `input` (troupe: `POST /runs`; AG-UI: a new thread) and follow it. Resolves with its id. */
  async start(input: string, target?: StartRequest['target']): Promise<string> {
    if (this.protocol === 'ag-ui') {
      this.run = `thread-${Date.now().toString(36)}`;
      await this.updateComplete;
      await this.#aguiSend({ text: input });
      return this.run;
    }
    const runId = await this.#api().start({ input, ...(target ? { target } : {}) });
    this.run = runId;
    this.dispatchEvent(new CustomEvent('troupe-run-started', { detail: { runId }, bubbles: true, composed: true }));
    return runId;
  }

  /** Answer request `requestId`; a refusal is shown where the request is. */
  async answer(requestId: string, answer: Record<string, unknown>): Promise<boolean> {
    const request = this.#model.requests.get(requestId);
    if (!request || !this.run || (request.status !== 'pending' && request.status !== 'sending')) return false;
    this.#setRequest(request, { status: 'sending', error: undefined });
    this.#toEnd();
    try {
      if (request.via === 'agui') await this.#aguiSend({ resume: [{ interruptId: requestId, status: 'resolved', payload: answer }] }, request, answer);
      else await this.#api().answer(this.run, requestId, answer);
      this.#setRequest(request, { status: 'answered', answer });
      return true;
    } catch (error) {
      const refused = error instanceof UiRequestError && error.status === 400;
      const gone = error instanceof UiRequestError && error.status === 409;
      const message = error instanceof UiRequestError && error.issues.length ? error.issues.join('; ') : error instanceof Error ? error.message : String(error);
      this.#setRequest(request, gone ? { status: 'withdrawn', error: 'It was answered elsewhere, or is no longer asked.' } : { status: 'pending', error: refused ? message : `Not sent: ${message}` });
      return false;
    }
  }

  #setRequest(request: PendingRequest, patch: Partial<PendingRequest>): void {
    Object.assign(request, patch);
    if (patch.error === undefined && 'error' in patch) delete request.error;
    this.#model.update(`request-${request.id}`, {});
    this.requestUpdate();
  }

  #ended(): boolean {
    const status = this.#model.status;
    return status === 'completed' || status === 'failed' || status === 'cancelled';
  }

  /** Ask the run to stop (`POST /runs/:id/cancel`; AG-UI: stop reading). */
  async cancel(): Promise<void> {
    if (!this.run) return;
    if (this.protocol === 'ag-ui') {
      this.#abort?.abort();
      this.#model.status = 'cancelled';
      this.requestUpdate();
      return;
    }
    try {
      await this.#api().cancel(this.run);
      // The run's own end ("The run was cancelled.") may arrive before the
      // answer to the request; then it already says what happened.
      if (!this.#ended()) this.#model.add({ source: 'system', author: 'troupe', time: Date.now(), kind: 'status', text: 'Asked the run to stop.' });
    } catch (error) {
      if (this.#ended()) return void this.requestUpdate();
      this.#model.add({ source: 'system', author: 'troupe', time: Date.now(), kind: 'error', text: `Could not stop the run: ${error instanceof Error ? error.message : String(error)}` });
    }
    this.requestUpdate();
  }

  /** Send an instruction to the running workers (`POST /runs/:id/instructions`). */
  async instruct(text: string): Promise<void> {
    if (!this.run) return;
    // Shown before it is sent: its `plan.instruction` can come back on the stream before the request's answer.
    const reader = this.#troupe;
    const shown = reader.noteInstruction(text, Date.now());
    this.requestUpdate();
    try {
      await this.#api().instruct(this.run, text);
    } catch (error) {
      reader.dropInstruction(shown, text);
      this.requestUpdate();
      throw error;
    }
  }

  /** An AG-UI request: a new user message, or answers to interrupts. */
  async #aguiSend(what: { text?: string; resume?: AguiRequest['resume'] }, request?: PendingRequest, answer?: Record<string, unknown>): Promise<void> {
    if (!this.run) return;
    if (what.text) this.#model.add({ source: 'user', author: 'You', time: Date.now(), kind: 'text', text: what.text });
    // The thread's messages so far, as AG-UI carries them: the person's, and the agents' answers.
    const messages = this.#model.messages
      .filter((m) => m.kind === 'text' && m.source !== 'system' && m.source !== 'injection' && !m.streaming)
      .slice(-100)
      .map((m) => ({ id: m.id, role: m.source === 'user' ? 'user' : 'assistant', content: m.text }));
    if (request && answer) this.#setRequest(request, { status: 'answered', answer });
    this.#abort?.abort();
    const abort = (this.#abort = new AbortController());
    this.#model.status = 'running';
    this.requestUpdate();
    await runAgui({ endpoint: this.endpoint, token: this.token, headers: this.headers }, { threadId: this.run, messages, ...(what.resume ? { resume: what.resume } : {}), state: this.#agui.state }, (event) => this.#enqueue(undefined, event, true), abort.signal).catch((error: unknown) => {
      if (abort.signal.aborted) return;
      throw error;
    });
  }
}

/** The next animation frame, or 50 ms when frames do not come (a page in a tab behind others gets none). */
function nextFrame(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 50);
    requestAnimationFrame(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
