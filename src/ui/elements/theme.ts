/**
 * The interface's look, as CSS custom properties every element reads: a
 * light and a dark theme (the `theme` attribute, else the reader's
 * `prefers-color-scheme`), each colour checked for 4.5:1 contrast with
 * the text and surfaces it meets. A page themes the elements by setting
 * `--troupe-*` properties on them or on an ancestor.
 * @module
 */
import { css } from 'lit';

/** The theme variables, the reduced-motion rule and what every element shares. */
export const theme = css`
  :host {
    --_bg: var(--troupe-bg, #ffffff);
    --_surface: var(--troupe-surface, #f6f7f9);
    --_surface-2: var(--troupe-surface-2, #eaedf1);
    --_text: var(--troupe-text, #1b1f24);
    --_muted: var(--troupe-muted, #555e69);
    --_border: var(--troupe-border, #c9d0d8);
    --_accent: var(--troupe-accent, #0b57d0);
    --_on-accent: var(--troupe-on-accent, #ffffff);
    --_danger: var(--troupe-danger, #b3261e);
    --_success: var(--troupe-success, #1e7b34);
    --_warning: var(--troupe-warning, #8a5300);
    --_user: var(--troupe-user, #0b57d0);
    --_lead: var(--troupe-lead, #6a3fb5);
    --_system: var(--troupe-system, #555e69);
    --_injection: var(--troupe-injection, #9a4b00);
    --_on-colour: var(--troupe-on-colour, #ffffff);
    --_worker-0: var(--troupe-worker-0, #0b6e7f);
    --_worker-1: var(--troupe-worker-1, #b3261e);
    --_worker-2: var(--troupe-worker-2, #1e7b34);
    --_worker-3: var(--troupe-worker-3, #a3214f);
    --_worker-4: var(--troupe-worker-4, #6133c4);
    --_worker-5: var(--troupe-worker-5, #8f4a00);
    --_worker-6: var(--troupe-worker-6, #1859a9);
    --_worker-7: var(--troupe-worker-7, #5d6b00);
    --_font: var(--troupe-font, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif);
    --_mono: var(--troupe-mono, ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace);
    --_radius: var(--troupe-radius, 10px);
    --_focus: var(--troupe-focus, #0b57d0);
    color-scheme: light;
    font-family: var(--_font);
    color: var(--_text);
    box-sizing: border-box;
  }
  :host([theme='dark']) {
    --_bg: var(--troupe-bg, #0f1115);
    --_surface: var(--troupe-surface, #171a21);
    --_surface-2: var(--troupe-surface-2, #222734);
    --_text: var(--troupe-text, #e6e8eb);
    --_muted: var(--troupe-muted, #a3acb9);
    --_border: var(--troupe-border, #3a4150);
    --_accent: var(--troupe-accent, #8ab4f8);
    --_on-accent: var(--troupe-on-accent, #0f1115);
    --_danger: var(--troupe-danger, #ff8a80);
    --_success: var(--troupe-success, #81c995);
    --_warning: var(--troupe-warning, #fdd663);
    --_user: var(--troupe-user, #8ab4f8);
    --_lead: var(--troupe-lead, #c4a7ff);
    --_system: var(--troupe-system, #a3acb9);
    --_injection: var(--troupe-injection, #ffb86b);
    --_on-colour: var(--troupe-on-colour, #0f1115);
    --_worker-0: var(--troupe-worker-0, #66d9e8);
    --_worker-1: var(--troupe-worker-1, #ffa8a8);
    --_worker-2: var(--troupe-worker-2, #8ce99a);
    --_worker-3: var(--troupe-worker-3, #faa2c1);
    --_worker-4: var(--troupe-worker-4, #b197fc);
    --_worker-5: var(--troupe-worker-5, #ffc078);
    --_worker-6: var(--troupe-worker-6, #74c0fc);
    --_worker-7: var(--troupe-worker-7, #d8f5a2);
    --_focus: var(--troupe-focus, #8ab4f8);
    color-scheme: dark;
  }
  @media (prefers-color-scheme: dark) {
    :host(:not([theme='light'])) {
      --_bg: var(--troupe-bg, #0f1115);
      --_surface: var(--troupe-surface, #171a21);
      --_surface-2: var(--troupe-surface-2, #222734);
      --_text: var(--troupe-text, #e6e8eb);
      --_muted: var(--troupe-muted, #a3acb9);
      --_border: var(--troupe-border, #3a4150);
      --_accent: var(--troupe-accent, #8ab4f8);
      --_on-accent: var(--troupe-on-accent, #0f1115);
      --_danger: var(--troupe-danger, #ff8a80);
      --_success: var(--troupe-success, #81c995);
      --_warning: var(--troupe-warning, #fdd663);
      --_user: var(--troupe-user, #8ab4f8);
      --_lead: var(--troupe-lead, #c4a7ff);
      --_system: var(--troupe-system, #a3acb9);
      --_injection: var(--troupe-injection, #ffb86b);
      --_on-colour: var(--troupe-on-colour, #0f1115);
      --_worker-0: var(--troupe-worker-0, #66d9e8);
      --_worker-1: var(--troupe-worker-1, #ffa8a8);
      --_worker-2: var(--troupe-worker-2, #8ce99a);
      --_worker-3: var(--troupe-worker-3, #faa2c1);
      --_worker-4: var(--troupe-worker-4, #b197fc);
      --_worker-5: var(--troupe-worker-5, #ffc078);
      --_worker-6: var(--troupe-worker-6, #74c0fc);
      --_worker-7: var(--troupe-worker-7, #d8f5a2);
      --_focus: var(--troupe-focus, #8ab4f8);
      color-scheme: dark;
    }
  }
  *,
  *::before,
  *::after {
    box-sizing: inherit;
  }
  :focus-visible {
    outline: 2px solid var(--_focus);
    outline-offset: 2px;
  }
  button {
    font: inherit;
    color: var(--_text);
    background: var(--_surface-2);
    border: 1px solid var(--_border);
    border-radius: 8px;
    padding: 0.35rem 0.75rem;
    cursor: pointer;
  }
  button:hover:not(:disabled) {
    border-color: var(--_accent);
  }
  button:disabled {
    cursor: not-allowed;
    opacity: 0.65;
  }
  button.primary {
    background: var(--_accent);
    color: var(--_on-accent);
    border-color: var(--_accent);
  }
  button.danger {
    color: var(--_danger);
  }
  input,
  textarea,
  select {
    font: inherit;
    color: var(--_text);
    background: var(--_bg);
    border: 1px solid var(--_border);
    border-radius: 8px;
    padding: 0.4rem 0.55rem;
  }
  .visually-hidden {
    position: absolute !important;
    width: 1px;
    height: 1px;
    padding: 0;
    margin: -1px;
    overflow: hidden;
    clip: rect(0, 0, 0, 0);
    white-space: nowrap;
    border: 0;
  }
  .muted {
    color: var(--_muted);
  }
  .error {
    color: var(--_danger);
  }
  @media (prefers-reduced-motion: reduce) {
    *,
    *::before,
    *::after {
      animation: none !important;
      transition: none !important;
      scroll-behavior: auto !important;
    }
  }
`;

/** The colour variable of worker `index`. */
export const workerColour = (index: number): string => `var(--_worker-${index % 8})`;

/** The colour variable of a message source. */
export const sourceColour = (source: string, worker?: number): string =>
  source === 'worker' ? workerColour(worker ?? 0) : `var(--_${source === 'user' || source === 'lead' || source === 'injection' ? source : 'system'})`;

/** True when the reader asked for less motion. */
export const reducedMotion = (): boolean => typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
