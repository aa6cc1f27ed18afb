import { env } from 'cloudflare:test';
import { SELF } from '../contract';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from '../contract';
import { BASE, newProduct, newUser, type TestUser } from '../helpers';

// Locally D1 has no replicas, so whether a read sees its own writes cannot fail here. What can: the bookmark each
// response returns (it must never go backwards for a client that sends back the latest one, and a write must move
// it forward), and which session each request opens (recorded through a wrapper around the D1 binding).

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
const app = createCheckedApp();

/** The D1 binding, with the constraint of every session opened on it recorded. */
function recordingDb() {
  const constraints: string[] = [];
  const db = new Proxy(env.DB, {
    get(target, property) {
      if (property === 'withSession') return (constraint: string) => (constraints.push(constraint), target.withSession(constraint));
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db, constraints };
}

async function send(user: TestUser, path: string, { bookmark, body, db = env.DB }: { bookmark?: string; body?: unknown; db?: D1Database } = {}) {
  const headers: Record<string, string> = { 'X-API-Key': user.key };
  if (bookmark !== undefined) headers['X-D1-Bookmark'] = bookmark;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await app.request(`/api/v2${path}`, { method: body === undefined ? 'GET' : 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) }, { ...env, DB: db });
  const json = (await res.json()) as any;
  return { status: res.status, json, bookmark: res.headers.get('X-D1-Bookmark') };
}

describe('D1 sessions (read replicas)', () => {
  it('the bookmark never goes backwards for a client that sends back the latest one, and every write moves it forward', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 5 });
    const steps: Array<{ path: string; body?: unknown }> = [
      { path: '/orders', body: { product_id: product.id, quantity: 1 } },
      { path: '/wallet/balance' },
      { path: '/orders' },
      { path: '/orders', body: { product_id: product.id, quantity: 2 } },
      { path: '/wallet/transactions' },
      { path: '/api-keys', body: { name: 'second' } },
      { path: '/user/profile' },
    ];
    let latest: string | undefined;
    for (const step of steps) {
      const res = await send(user, step.path, { bookmark: latest, body: step.body });
      expect(res.status, `${step.path}: ${JSON.stringify(res.json)}`).toBeLessThan(300);
      expect(res.bookmark, step.path).toMatch(BOOKMARK);
      // Bookmarks are fixed-width hex, so their order is their string order.
      if (latest !== undefined) expect(res.bookmark! > latest || (step.body === undefined && res.bookmark === latest), `${step.path}: ${res.bookmark} after ${latest}`).toBe(true);
      latest = res.bookmark!;
    }
  });

  it('a read with an older bookmark answers one at least as recent as it', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 3 });
    const first = await send(user, '/orders', { body: { product_id: product.id, quantity: 1 } });
    const second = await send(user, '/orders', { body: { product_id: product.id, quantity: 1 }, bookmark: first.bookmark! });
    const read = await send(user, `/orders/${first.json.data.id}`, { bookmark: first.bookmark! });
    expect(read.json.data.order_number).toBe(first.json.data.order_number);
    expect(read.bookmark! >= first.bookmark!).toBe(true);
    expect(second.bookmark! > first.bookmark!).toBe(true);
  });

  it('opens each request on the right session: reads where the bookmark says, writes and malformed bookmarks on the primary', async () => {
    const user = await newUser({ balance: 2 });
    const { bookmark } = await send(user, '/wallet/balance');
    const cases: Array<[label: string, options: { bookmark?: string; body?: unknown }, path: string, constraint: string]> = [
      ['a read without bookmark: any replica', {}, '/wallet/balance', 'first-unconstrained'],
      ['a read with a bookmark: a replica at least that fresh', { bookmark: bookmark! }, '/wallet/balance', bookmark!],
      ['a write: the primary, whatever the bookmark', { bookmark: bookmark!, body: { name: 'k' } }, '/api-keys', 'first-primary'],
      ['malformed: words', { bookmark: 'not a bookmark' }, '/wallet/balance', 'first-primary'],
      ['malformed: an upper-case hex digit', { bookmark: `${bookmark!.slice(0, -1)}A` }, '/wallet/balance', 'first-primary'],
      ['malformed: truncated', { bookmark: bookmark!.slice(0, -1) }, '/wallet/balance', 'first-primary'],
      ['malformed: extended', { bookmark: `${bookmark}0` }, '/wallet/balance', 'first-primary'],
      ['malformed: a session keyword', { bookmark: 'first-unconstrained' }, '/wallet/balance', 'first-primary'],
      ['malformed: empty', { bookmark: '' }, '/wallet/balance', 'first-primary'],
    ];
    for (const [label, options, path, constraint] of cases) {
      const { db, constraints } = recordingDb();
      const res = await send(user, path, { ...options, db });
      expect(res.status, `${label}: ${JSON.stringify(res.json)}`).toBeLessThan(300);
      expect(constraints, label).toEqual([constraint]);
      expect(res.bookmark, label).toMatch(BOOKMARK);
    }
  });

  it('public responses carry no bookmark (they are cached for everyone)', async () => {
    const res = await SELF.fetch(`${BASE}/stock`);
    expect(res.status).toBe(200);
    expect(res.headers.get('X-D1-Bookmark')).toBeNull();
  });
});
