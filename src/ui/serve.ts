/**
 * Serving the team interface from a web server: the bundled script, and a
 * page that shows the whole interface (`<troupe-app>`) or one team chat,
 * under a strict Content-Security-Policy. Web-standard `Request` in,
 * `Response` out, like `troupe/http`'s handler.
 * @module
 */
import { createHash } from 'node:crypto';
import { ConfigurationError, describeValue } from '../core/errors.js';
import { defineOptions, listOf, oneOf, required, string } from '../core/options.js';
import type { Handler } from '../integrations/http/handler.js';
import { UI_SCRIPT } from './bundle.js';

/** Where {@link uiHandler} serves the script, under its `basePath`. */
export const UI_SCRIPT_PATH = '/troupe-ui.js';

const SCRIPT_ETAG = `"${createHash('sha256').update(UI_SCRIPT).digest('base64url').slice(0, 27)}"`;

/**
 * The script as a response: `text/javascript`, revalidated by its ETag
 * (a request whose `If-None-Match` names it gets a 304).
 *
 * @example
 * ```ts
 * if (url.pathname === '/troupe-ui.js') return uiScriptResponse(request);
 * ```
 */
export function uiScriptResponse(request?: Request): Response {
  const headers = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', etag: SCRIPT_ETAG, 'x-content-type-options': 'nosniff' };
  if (request?.headers.get('if-none-match') === SCRIPT_ETAG) return new Response(null, { status: 304, headers });
  return new Response(UI_SCRIPT, { status: 200, headers });
}

/** Options of {@link uiPage} and {@link uiHandler}. */
export interface UiPageOptions {
  /** The base URL of the run routes (`troupe/http`'s `basePath`, e.g. `/api`). */
  endpoint: string;
  /** The page's title. Default: `troupe`. */
  title?: string;
  /** `app`: picker, history and chat (`troupe dev`); `chat`: one team chat. Default: `app`. */
  view?: 'app' | 'chat';
  /** Sent as `?token=` on the interface's requests. */
  token?: string;
  /** `light` or `dark`; default: as the reader's system says. */
  theme?: 'light' | 'dark';
  /** Origins images in model output may load from (`https://cdn.example.com`); default: none. */
  imageOrigins?: readonly string[];
  /** Where the script is. Default: `/troupe-ui.js`. */
  scriptUrl?: string;
  /** For `view: 'chat'`: `troupe` (the default) or `ag-ui`, whose endpoint is then the AG-UI URL. */
  protocol?: 'troupe' | 'ag-ui';
}

const attribute = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const PAGE_STYLE = 'html,body{height:100%;margin:0}body{background:Canvas;color:CanvasText}troupe-app,troupe-team-chat{height:100%}';
const PAGE_STYLE_HASH = `'sha256-${createHash('sha256').update(PAGE_STYLE).digest('base64')}'`;

const uiPageShape = {
  endpoint: required(string),
  title: string,
  view: oneOf(['app', 'chat']),
  token: string,
  theme: oneOf(['light', 'dark']),
  imageOrigins: listOf(string),
  scriptUrl: string,
  protocol: oneOf(['troupe', 'ag-ui']),
};
const uiPageOptions = defineOptions<UiPageOptions>('uiPage', uiPageShape);
const cspOptions = defineOptions<Pick<UiPageOptions, 'imageOrigins'>>('uiContentSecurityPolicy', { imageOrigins: uiPageShape.imageOrigins });

/** The page's Content-Security-Policy: its own script and styles, requests to itself, images only from the allowed origins. */
export function uiContentSecurityPolicy(options: Pick<UiPageOptions, 'imageOrigins'> = {}): string {
  cspOptions.check(options);
  const images = ["'self'", 'data:', ...(options.imageOrigins ?? []).map((o) => (o === '*' ? 'https:' : o))].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' ${PAGE_STYLE_HASH}`,
    `img-src ${images}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The page's HTML: the interface, on the run routes at `endpoint`. */
export function uiPage(options: UiPageOptions): string {
  if (!options || typeof options.endpoint !== 'string') throw new ConfigurationError(`Expected \`endpoint\` to be the run routes' base URL, got ${describeValue(options?.endpoint)}`);
  uiPageOptions.check(options);
  const tag = options.view === 'chat' ? 'troupe-team-chat' : 'troupe-app';
  const attrs = [
    `endpoint="${attribute(options.endpoint)}"`,
    ...(options.token ? [`token="${attribute(options.token)}"`] : []),
    ...(options.theme ? [`theme="${options.theme === 'dark' ? 'dark' : 'light'}"`] : []),
    ...(options.imageOrigins?.length ? [`image-origins="${attribute(options.imageOrigins.join(' '))}"`] : []),
    ...(options.view === 'chat' ? (options.protocol === 'ag-ui' ? ['protocol="ag-ui"'] : []) : [`heading="${attribute(options.title ?? 'troupe')}"`]),
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${attribute(options.title ?? 'troupe')}</title>
<link rel="icon" href="data:,">
<style>${PAGE_STYLE}</style>
<script type="module" src="${attribute(options.scriptUrl ?? UI_SCRIPT_PATH)}"></script>
</head>
<body>
<${tag} ${attrs.join(' ')}></${tag}>
</body>
</html>
`;
}

/** Options of {@link uiHandler}. */
export interface UiHandlerOptions extends UiPageOptions {
  /** Where the page and the script live, e.g. `/ui`. Default: `''` (the page at `/`). */
  basePath?: string;
}

const uiHandlerOptions = defineOptions<UiHandlerOptions>('uiHandler', { ...uiPageShape, basePath: string });

/**
 * A handler of the interface's two routes: `GET <basePath>/` (the page)
 * and `GET <basePath>/troupe-ui.js` (the script); anything else is a 404.
 * Put it beside `runHandler`:
 *
 * @example
 * ```ts
 * const api = runHandler({ store, authorize, start, basePath: '/api' });
 * const ui = uiHandler({ endpoint: '/api' });
 * createServer(toNodeListener((r) => (new URL(r.url).pathname.startsWith('/api/') ? api(r) : ui(r)))).listen(8080, '127.0.0.1');
 * ```
 */
export function uiHandler(options: UiHandlerOptions): Handler {
  uiHandlerOptions.check(options);
  const base = trimSlashes(options.basePath ?? '');
  if (base !== '' && !base.startsWith('/')) throw new ConfigurationError(`Expected \`basePath\` to start with "/", got ${describeValue(options.basePath)}`);
  const { basePath: _basePath, ...pageOptions } = options;
  const page = uiPage({ ...pageOptions, scriptUrl: options.scriptUrl ?? `${base}${UI_SCRIPT_PATH}` });
  const pageHeaders = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': uiContentSecurityPolicy({ ...(options.imageOrigins ? { imageOrigins: options.imageOrigins } : {}) }), 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };
  return async (request) => {
    const { pathname } = new URL(request.url);
    if (request.method !== 'GET' && request.method !== 'HEAD') return new Response('Method not allowed', { status: 405, headers: { allow: 'GET, HEAD' } });
    if (pathname === `${base}${UI_SCRIPT_PATH}`) return uiScriptResponse(request);
    if (pathname === `${base}/` || pathname === `${base}/index.html` || (base !== '' && pathname === base)) return new Response(request.method === 'HEAD' ? null : page, { status: 200, headers: pageHeaders });
    return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  };
}

function trimSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}
