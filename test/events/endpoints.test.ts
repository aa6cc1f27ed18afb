import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from '../contract';
import { BASE, call, expectError, newUser, type TestUser } from '../helpers';

// POST/GET/DELETE /webhook-endpoints. Nothing here changes money, so no event is ever delivered to these URLs.

const create = (user: TestUser, body: Record<string, unknown>) => call('/webhook-endpoints', { key: user.key, body });
const endpoint = (url = 'https://example.com/hooks/stock', events: string[] = ['*']) => ({ url, events });

describe('webhook endpoints', () => {
  it('creates an endpoint with a whsec_ secret shown once; the list never shows it', async () => {
    const user = await newUser();
    const res = await create(user, { url: 'https://example.com/hooks', events: ['order.created', 'deposit.paid'], description: 'shop' });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toEqual({
      id: expect.any(Number),
      url: 'https://example.com/hooks',
      events: ['order.created', 'deposit.paid'],
      description: 'shop',
      secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{32}$/),
      created_at: expect.any(String),
    });
    const list = await call('/webhook-endpoints', { key: user.key });
    const { secret: _secret, ...shown } = res.json.data;
    expect(list.json.data).toEqual([shown]);
    expect(list.text).not.toContain(res.json.data.secret);
  });

  it('lists newest first and only the caller\'s endpoints; description defaults to null', async () => {
    const user = await newUser();
    const other = await newUser();
    const first = (await create(user, endpoint('https://a.example.com/'))).json.data;
    const second = (await create(user, endpoint('https://b.example.com/'))).json.data;
    await create(other, endpoint('https://c.example.com/'));
    const list = (await call('/webhook-endpoints', { key: user.key })).json.data;
    expect(list.map((w: { id: number }) => w.id)).toEqual([second.id, first.id]);
    expect(first.description).toBeNull();
  });

  it('deletes an endpoint once; an unknown, already deleted or another user\'s endpoint is a 404', async () => {
    const user = await newUser();
    const other = await newUser();
    const id = (await create(user, endpoint())).json.data.id;
    expectError(await call(`/webhook-endpoints/${id}`, { key: other.key, method: 'DELETE' }), 404, 'NOT_FOUND');
    const deleted = await call(`/webhook-endpoints/${id}`, { key: user.key, method: 'DELETE' });
    expect(deleted.json).toEqual({ success: true, message: expect.any(String) });
    expectError(await call(`/webhook-endpoints/${id}`, { key: user.key, method: 'DELETE' }), 404, 'NOT_FOUND');
    expectError(await call('/webhook-endpoints/999999', { key: user.key, method: 'DELETE' }), 404, 'NOT_FOUND');
    expectError(await call('/webhook-endpoints/abc', { key: user.key, method: 'DELETE' }), 422, 'VALIDATION_FAILED');
    expect((await call('/webhook-endpoints', { key: user.key })).json.data).toEqual([]);
  });

  it('needs an API key', async () => {
    expectError(await call('/webhook-endpoints'), 401, 'UNAUTHORIZED');
    expectError(await call('/webhook-endpoints', { body: endpoint() }), 401, 'UNAUTHORIZED');
  });
});

describe('at most five endpoints per user', () => {
  it('the 6th is a 400 WEBHOOK_ENDPOINT_LIMIT_REACHED that creates nothing; deleting one frees a slot', async () => {
    const user = await newUser();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(user, endpoint(`https://example.com/${i}`))).json.data.id);
    expectError(await create(user, endpoint('https://example.com/6')), 400, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
    expect((await call('/webhook-endpoints', { key: user.key })).json.data).toHaveLength(5);
    await call(`/webhook-endpoints/${ids[0]}`, { key: user.key, method: 'DELETE' });
    expect((await create(user, endpoint('https://example.com/again'))).status).toBe(201);
    // Another user's limit is their own.
    expect((await create(await newUser(), endpoint())).status).toBe(201);
  });

  it('holds under concurrency: ten simultaneous creations make exactly five', async () => {
    const user = await newUser();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(user, endpoint(`https://example.com/c${i}`))));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    for (const refused of results.filter((r) => r.status !== 201)) expectError(refused, 400, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
    const stored = await env.DB.prepare('SELECT count(*) AS n FROM webhook_endpoints WHERE user_id = ?').bind(user.id).first<{ n: number }>();
    expect(stored!.n).toBe(5);
  });
});

describe('endpoint URL and events rules', () => {
  it('accepts https:// anywhere, and http:// on localhost or 127.0.0.1 when ALLOW_LOCAL_WEBHOOK_URLS=true (the test config)', async () => {
    const user = await newUser();
    for (const url of ['https://hooks.example.com/x?y=1', 'http://localhost:8080/hook', 'http://127.0.0.1:9999/', "https://hooks.example.com/a%20b/c;d?e=f&g=/h?#frag/ment:'()*+,"]) {
      expect((await create(user, endpoint(url))).status, url).toBe(201);
    }
  });

  it('refuses other URLs with 422 errors.url, creating nothing', async () => {
    const user = await newUser();
    for (const url of ['http://example.com/hook', 'http://192.168.1.5/hook', 'http://localhost.example.com/', 'ftp://example.com/', 'example.com/hook', 'not a url', 'https://user:pass@example.com/',
      // Characters no URI contains (the document says format: uri; found by the contract fuzzer).
      'https://hooks.example.com/#"h', 'https://hooks.example.com/{x}', 'https://hooks.example.com/a|b', 'https://hooks.example.com/%zz', 'https://hooks.example.com/a#b#c']) {
      const res = await create(user, endpoint(url));
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.url, url).toBeDefined();
    }
    expect((await call('/webhook-endpoints', { key: user.key })).json.data).toEqual([]);
  });

  it('refuses local http:// URLs when ALLOW_LOCAL_WEBHOOK_URLS is not true (the production default)', async () => {
    const user = await newUser();
    const app = createCheckedApp();
    const post = (url: string, allow?: string) =>
      app.request(
        `${BASE}/webhook-endpoints`,
        { method: 'POST', headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json' }, body: JSON.stringify(endpoint(url)) },
        { ...env, ALLOW_LOCAL_WEBHOOK_URLS: allow },
      );
    for (const allow of [undefined, 'false', '1']) {
      const res = await post('http://localhost:8080/hook', allow);
      expect(res.status, String(allow)).toBe(422);
      expect(((await res.json()) as { errors: Record<string, string[]> }).errors.url).toEqual(['url must use https://']);
    }
    expect((await post('https://example.com/hook')).status).toBe(201);
  });

  it('events: known types or "*", at least one; "*" with others is every type, repeats count once', async () => {
    const user = await newUser();
    const every = await create(user, { url: 'https://example.com/a', events: ['order.created', '*'] });
    expect(every.json.data.events).toEqual(['*']);
    const repeated = await create(user, { url: 'https://example.com/b', events: ['deposit.paid', 'deposit.paid', 'order.created'] });
    expect(repeated.json.data.events).toEqual(['deposit.paid', 'order.created']);
    for (const made of [every, repeated]) expect((await call(`/webhook-endpoints/${made.json.data.id}`, { key: user.key, method: 'DELETE' })).status).toBe(200);
    const bad: unknown[] = [[], ['order.shipped'], 'order.created', [1]];
    for (const events of bad) {
      const res = await create(user, { url: 'https://example.com/', events });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.events ?? res.json.errors['events.0'], JSON.stringify(events)).toBeDefined();
    }
    expectError(await create(user, { events: ['*'] }), 422, 'VALIDATION_FAILED');
    expectError(await create(user, { url: 'https://example.com/', events: ['*'], description: 'x'.repeat(256) }), 422, 'VALIDATION_FAILED');
    expect((await call('/webhook-endpoints', { key: user.key })).json.data).toEqual([]);
  });
});
