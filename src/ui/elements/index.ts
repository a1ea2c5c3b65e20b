/**
 * The team interface's custom elements, bundled (with Lit, the
 * virtualiser and the highlighter) into one ES module that defines them
 * when it loads: `<script type="module" src="/troupe-ui.js">`, or `import
 * 'troupe/ui'` in a bundler. A name already taken is left as it is.
 * @module
 */
import { TroupeApp } from './app.js';
import { TroupeApproval } from './approval.js';
import { TroupeInputBar } from './input-bar.js';
import { TroupePlanReview } from './plan-review.js';
import { TroupeRunHistory } from './run-history.js';
import { TroupeTeamChat } from './team-chat.js';
import { TroupeTeamPicker } from './team-picker.js';
import { TroupeWorkerBar } from './worker-bar.js';
import { TroupeWorkerTurns } from './worker-turns.js';

export { TroupeApp, TroupeApproval, TroupeInputBar, TroupePlanReview, TroupeRunHistory, TroupeTeamChat, TroupeTeamPicker, TroupeWorkerBar, TroupeWorkerTurns };
export { parseMarkdown } from '../markdown.js';
export { renderMarkdown, safeLink, imageAllowed } from './render-markdown.js';
export { ChatModel } from '../model.js';
export { UiRequestError } from './client.js';

/** Every element, by tag name. */
export const elements = {
  'troupe-app': TroupeApp,
  'troupe-team-chat': TroupeTeamChat,
  'troupe-worker-bar': TroupeWorkerBar,
  'troupe-plan-review': TroupePlanReview,
  'troupe-approval': TroupeApproval,
  'troupe-input-bar': TroupeInputBar,
  'troupe-worker-turns': TroupeWorkerTurns,
  'troupe-run-history': TroupeRunHistory,
  'troupe-team-picker': TroupeTeamPicker,
} as const;

/** Define every element (those whose name is taken already are left alone). */
export function defineElements(registry: CustomElementRegistry = customElements): void {
  for (const [name, element] of Object.entries(elements)) if (!registry.get(name)) registry.define(name, element);
}

if (typeof customElements !== 'undefined') defineElements();
