// What a request must be before a route reads its body: JSON (415
// otherwise, so a form or a `text/plain` post cannot start a run), and, when
// it carries a cookie, sent from an origin the server allows (403
// otherwise: a page of another site cannot act with a person's cookie).
import { describe, expect, it } from 'vitest';
import { agent, startRun, type RunHandle } from 'troupe';
import { memoryStore, scriptedAdapter } from 'troupe/testing';
import { runHandler, type Handler } from 'troupe/http';

function setup(options: { allowedOrigins?: readonly string[] | ((origin: string, request: Request) => boolean) } = {}) {
  const root = memoryStore();
  const started: RunHandle[] = [];
  const adapter = scriptedAdapter({ fallback: 'Done.' });
  const handler = runHandler({
    store: root,
    pollMs: 5,
    // A bearer token, or the session cookie of a browser.
    authorize: (request) => (request.headers.get('authorization') === 'Bearer t' || (request.headers.get('cookie') ?? '').includes('session=s1') ? { tenant: 'acme' } : null),
    start: ({ store, runId, input }) => void started.push(startRun(agent({ name: 'ops' }), input, { adapter, store, runId })),
    ...options,
  });
  return { root, started, handler };
}

const post = (handler: Handler, path: string, body: string, headers: Record<string, string>) =>
  handler(new Request(`http://app.example${path}`, { method: 'POST', body, headers: { host: 'app.example', ...headers } }));

describe('JSON bodies only', () => {
  it('refuses text/plain, forms and a missing type with 415, and starts nothing', async () => {
    const { handler, started, root } = setup();
    const body = JSON.stringify({ input: 'Deploy', runId: 'r1' });
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp', 'application/json-seq', 'json', undefined]) {
      const response = await post(handler, '/runs', body, { authorization: 'Bearer t', ...(type === undefined ? {} : { 'content-type': type }) });
      expect(response.status, String(type)).toBe(415);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type');
    }
    for (const path of ['/runs/r1/requests/q1', '/runs/r1/instructions', '/agui']) {
      const response = await post(handler, path, '{}', { authorization: 'Bearer t', 'content-type': 'text/plain' });
      expect(response.status, path).toBe(415);
    }
    expect(started).toHaveLength(0);
    expect(await root.list('')).toEqual([]);
  });

  it('accepts application/json and +json types, with parameters and in any case', async () => {
    const { handler, started } = setup();
    const types = ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"', 'application/vnd.api+json', 'application/merge-patch+json ; charset=utf-8'];
    for (const [i, type] of types.entries()) {
      const response = await post(handler, '/runs', JSON.stringify({ input: 'Deploy', runId: `ok-${i}` }), { authorization: 'Bearer t', 'content-type': type });
      expect(response.status, type).toBe(201);
    }
    await Promise.all(started.map((h) => h.result));
    expect(started).toHaveLength(types.length);
  });

  it('a cancel without a body needs no type', async () => {
    const { handler, started } = setup();
    expect((await post(handler, '/runs', JSON.stringify({ input: 'Deploy', runId: 'c1' }), { authorization: 'Bearer t', 'content-type': 'application/json' })).status).toBe(201);
    await started[0]!.result;
    const cancel = await handler(new Request('http://app.example/runs/c1/cancel', { method: 'POST', headers: { authorization: 'Bearer t' } }));
    expect(cancel.status).toBe(409); // the run ended: what matters is that it was not a 415
    const typed = await post(handler, '/runs/c1/cancel', 'x', { authorization: 'Bearer t', 'content-type': 'text/plain' });
    expect(typed.status).toBe(415);
  });
});

describe('the origin of requests that carry a cookie', () => {
  const json = { 'content-type': 'application/json' };
  const start = (runId: string) => JSON.stringify({ input: 'Deploy', runId });

  it('refuses a cookie request from another origin with 403, before anything runs', async () => {
    const { handler, started } = setup();
    for (const origin of ['https://evil.example', 'null', 'http://app.example.evil.example', 'http://app.example:8080']) {
      const response = await post(handler, '/runs', start('x1'), { ...json, cookie: 'session=s1', origin });
      expect(response.status, origin).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('forbidden_origin');
    }
    // A browser that sends no Origin but says the request crosses sites.
    const crossSite = await post(handler, '/runs', start('x1'), { ...json, cookie: 'session=s1', 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    // Reads too: another site's page cannot open the stream with the cookie.
    const stream = await handler(new Request('http://app.example/runs/x1/events', { headers: { host: 'app.example', cookie: 'session=s1', origin: 'https://evil.example' } }));
    expect(stream.status).toBe(403);
    expect(started).toHaveLength(0);
  });

  it('accepts its own origin (either scheme, behind a proxy that ends TLS), no Origin, and requests without a cookie', async () => {
    const { handler, started } = setup();
    expect((await post(handler, '/runs', start('o1'), { ...json, cookie: 'session=s1', origin: 'http://app.example' })).status).toBe(201);
    expect((await post(handler, '/runs', start('o2'), { ...json, cookie: 'session=s1', origin: 'https://app.example' })).status).toBe(201);
    expect((await post(handler, '/runs', start('o3'), { ...json, cookie: 'session=s1' })).status).toBe(201);
    expect((await post(handler, '/runs', start('o4'), { ...json, cookie: 'session=s1', 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    // A bearer token is not sent by a browser on its own: the origin is not the question.
    expect((await post(handler, '/runs', start('o5'), { ...json, authorization: 'Bearer t', origin: 'https://tools.example' })).status).toBe(201);
    await Promise.all(started.map((h) => h.result));
  });

  it('allowedOrigins adds origins, as a list or a function', async () => {
    const listed = setup({ allowedOrigins: ['https://console.example'] });
    expect((await post(listed.handler, '/runs', start('l1'), { ...json, cookie: 'session=s1', origin: 'https://console.example' })).status).toBe(201);
    expect((await post(listed.handler, '/runs', start('l2'), { ...json, cookie: 'session=s1', origin: 'https://other.example' })).status).toBe(403);
    expect((await post(listed.handler, '/runs', start('l3'), { ...json, cookie: 'session=s1', origin: 'http://app.example' })).status).toBe(201);
    const decided = setup({ allowedOrigins: (origin) => origin.endsWith('.corp.example') });
    expect((await post(decided.handler, '/runs', start('f1'), { ...json, cookie: 'session=s1', origin: 'https://a.corp.example' })).status).toBe(201);
    expect((await post(decided.handler, '/runs', start('f2'), { ...json, cookie: 'session=s1', origin: 'https://corp.example.evil' })).status).toBe(403);
    await Promise.all([...listed.started, ...decided.started].map((h) => h.result));
    expect(() => runHandler({ store: memoryStore(), authorize: () => null, allowedOrigins: 'https://x.example' as never })).toThrow(/allowedOrigins/);
  });
});
