// troupe/ui in Node: the page and the script served under a strict
// Content-Security-Policy, the script revalidated by its ETag, attributes
// escaped, a base path, and the names and types it exports.
import { describe, expect, it } from 'vitest';
import { UI_ELEMENTS, UI_SCRIPT, UI_SCRIPT_PATH, uiContentSecurityPolicy, uiHandler, uiPage, uiScriptResponse } from 'troupe/ui';

describe('uiHandler', () => {
  it('serves the page and the script, and nothing else', async () => {
    const handle = uiHandler({ endpoint: '/api', title: 'Our <team>', imageOrigins: ['https://cdn.example.com'] });
    const page = await handle(new Request('http://127.0.0.1/'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("img-src 'self' data: https://cdn.example.com");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('<title>Our &lt;team&gt;</title>');
    expect(html).toContain('<troupe-app endpoint="/api" image-origins="https://cdn.example.com" heading="Our &lt;team&gt;"></troupe-app>');
    expect(html).toContain(`<script type="module" src="${UI_SCRIPT_PATH}"></script>`);

    const script = await handle(new Request(`http://127.0.0.1${UI_SCRIPT_PATH}`));
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toBe(UI_SCRIPT);
    const again = await handle(new Request(`http://127.0.0.1${UI_SCRIPT_PATH}`, { headers: { 'if-none-match': script.headers.get('etag')! } }));
    expect(again.status).toBe(304);
    expect((await handle(new Request('http://127.0.0.1/other'))).status).toBe(404);
    expect((await handle(new Request('http://127.0.0.1/', { method: 'POST' }))).status).toBe(405);
  });

  it('serves one chat under a base path, for AG-UI too', async () => {
    const handle = uiHandler({ endpoint: '/agent', basePath: '/ui/', view: 'chat', protocol: 'ag-ui', theme: 'dark', token: 'a"b' });
    const html = await (await handle(new Request('http://127.0.0.1/ui/'))).text();
    expect(html).toContain('<troupe-team-chat endpoint="/agent" token="a&quot;b" theme="dark" protocol="ag-ui"></troupe-team-chat>');
    expect(html).toContain('<script type="module" src="/ui/troupe-ui.js"></script>');
    expect((await handle(new Request('http://127.0.0.1/ui/troupe-ui.js'))).status).toBe(200);
    expect((await handle(new Request('http://127.0.0.1/troupe-ui.js'))).status).toBe(404);
    expect(() => uiHandler({ endpoint: '/api', basePath: 'ui' })).toThrow(/Expected `basePath` to start with "\/"/);
    expect(() => uiPage({} as never)).toThrow(/Expected `endpoint`/);
  });

  it('allows any https image origin with *, and none by default', () => {
    expect(uiContentSecurityPolicy()).toContain("img-src 'self' data:;");
    expect(uiContentSecurityPolicy({ imageOrigins: ['*'] })).toContain("img-src 'self' data: https:;");
  });

  it('exports the script once, a module that defines every element', () => {
    expect(UI_SCRIPT.startsWith('/*! troupe team interface.')).toBe(true);
    for (const name of UI_ELEMENTS) expect(UI_SCRIPT).toContain(`"${name}"`);
    expect(uiScriptResponse().status).toBe(200);
  });
});
