/**
 * What a request must be before a route reads it: a JSON body (by its
 * `Content-Type`), and, when a browser sent it with a cookie, an origin the
 * server allows. Both look at headers only, in one pass each.
 * @module
 */

/** Which origins may send requests that carry a cookie: a list of origins (`https://app.example`), or a function that decides. */
export type AllowedOrigins = readonly string[] | ((origin: string, request: Request) => boolean);

/**
 * True for a JSON media type: `application/json` or `application/<x>+json`,
 * in any case, with any parameters (`; charset=utf-8`). False for anything
 * else and for no header.
 */
export function isJsonMediaType(header: string | null): boolean {
  if (header === null) return false;
  const semicolon = header.indexOf(';');
  const type = (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  if (!type.startsWith('application/')) return false;
  const subtype = type.slice('application/'.length);
  if (subtype === 'json') return true;
  if (!subtype.endsWith('+json') || subtype.length === '+json'.length) return false;
  for (let i = 0; i < subtype.length; i++) {
    const c = subtype.charCodeAt(i);
    // A token: no spaces, separators or controls.
    if (c <= 0x20 || c >= 0x7f || c === 0x2f || c === 0x2c || c === 0x22 || c === 0x3b) return false;
  }
  return true;
}

/**
 * Whether `request` may act with the cookie it carries: a request without a
 * `Cookie` header always may (a browser never adds a bearer token on its
 * own). One with a cookie may when its `Origin` is the server's own (the
 * same host and port as `Host`, either scheme, so a proxy that ends TLS
 * changes nothing) or one of `allowed`; without an `Origin`, unless the
 * browser says the request crosses sites (`Sec-Fetch-Site: cross-site`).
 * The origin `null` (a sandboxed frame, a file) is never allowed.
 */
export function originAllowed(request: Request, allowed: AllowedOrigins | undefined): boolean {
  if (!request.headers.has('cookie')) return true;
  const origin = request.headers.get('origin');
  if (origin === null) return request.headers.get('sec-fetch-site') !== 'cross-site';
  if (origin === 'null') return false;
  if (sameHost(origin, request)) return true;
  if (typeof allowed === 'function') return allowed(origin, request) === true;
  return allowed?.includes(origin) ?? false;
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

function sameHost(origin: string, request: Request): boolean {
  let from: URL;
  let to: URL;
  try {
    from = new URL(origin);
    to = new URL(`http://${request.headers.get('host') ?? new URL(request.url).host}`);
  } catch {
    return false;
  }
  if (from.hostname !== to.hostname) return false;
  const fromPort = from.port || DEFAULT_PORTS[from.protocol] || '';
  // `Host` names no port for the scheme's default one: either scheme's default.
  if (to.port === '') return fromPort === '80' || fromPort === '443';
  return fromPort === to.port;
}
