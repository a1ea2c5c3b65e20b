/**
 * The elements' names and the attributes of the team chat, as types a
 * page's own code can use without the DOM (for instance to declare the
 * elements to JSX: see docs/ui.md).
 * @module
 */

/** The custom elements `troupe/ui` defines. */
export const UI_ELEMENTS = [
  'troupe-app',
  'troupe-team-chat',
  'troupe-worker-bar',
  'troupe-plan-review',
  'troupe-approval',
  'troupe-input-bar',
  'troupe-worker-turns',
  'troupe-run-history',
  'troupe-team-picker',
] as const;

/** The name of one of them. */
export type UiElementName = (typeof UI_ELEMENTS)[number];

/** The attributes of `<troupe-team-chat>`. */
export interface TeamChatAttributes {
  /** The base URL of `troupe/http`'s run routes (`/api`), or the AG-UI endpoint with `protocol="ag-ui"`. */
  endpoint: string;
  /** The run to follow (troupe), or the thread (AG-UI). Absent: the input bar starts one. */
  run?: string;
  /** `troupe` (the default: troupe's event stream and answer routes) or `ag-ui`. */
  protocol?: 'troupe' | 'ag-ui';
  /** Sent as `?token=` on every request. */
  token?: string;
  /** The most messages kept. Default: 5000. */
  'max-messages'?: number | string;
  /** Origins images in model output may load from, space-separated (`*`: any https origin). Default: none. */
  'image-origins'?: string;
  /** `light` or `dark`; absent: as the reader's system says. */
  theme?: 'light' | 'dark';
  /** Show the run without the input bar. */
  readonly?: boolean;
}
