/**
 * `troupe/ui`: the team interface — custom elements that show a team at
 * work and let a person steer it (the team chat, the worker bar, the plan
 * review, approvals and questions answered in place, the input bar, run
 * history, a team picker), clients of `troupe/http`'s event streams and
 * answer routes or of any AG-UI server, never of the engine.
 *
 * In a browser (a bundler picks the `browser` condition) this subpath is
 * the elements themselves: `import 'troupe/ui'` defines them. In Node it
 * is what a server needs to serve them: the bundled script
 * (`UI_SCRIPT`, `uiScriptResponse`), a page (`uiPage`, `uiHandler`), and
 * the interface's state and readers as plain data (`ChatModel`,
 * `TroupeEventReader`, `AguiEventReader`, `parseMarkdown`), for tests and
 * for views of your own.
 * @module troupe/ui
 * @category Views
 */
export { UI_SCRIPT } from './bundle.js';
export { uiHandler, uiPage, uiScriptResponse, uiContentSecurityPolicy, UI_SCRIPT_PATH, type UiHandlerOptions, type UiPageOptions } from './serve.js';
export { ChatModel, WORKING, WORKER_COLOURS, type ChatModelOptions } from './model.js';
export { TroupeEventReader } from './troupe-events.js';
export { AguiEventReader, applyPatch } from './agui-events.js';
export { SseReader, MAX_SSE_EVENT, type SseEvent } from './sse.js';
export { parseMarkdown, parseInline, plainText, MAX_MARKDOWN_DEPTH, type MarkdownBlock, type MarkdownInline } from './markdown.js';
export { UI_ELEMENTS, type TeamChatAttributes, type UiElementName } from './elements-info.js';
export type {
  Catalog,
  CatalogEntry,
  ChatMessage,
  CheckpointSummary,
  MessageKind,
  MessageSource,
  PendingRequest,
  PlanChunkView,
  PlanView,
  RequestKind,
  RunStatus,
  RunSummary,
  ToolActivity,
  TurnView,
  WorkerState,
  WorkerStatus,
} from './types.js';
