import { describe, expect, it } from 'vitest';
import { freshIp } from '../dashboard-helpers';
import { SELF } from '../contract';
import { ADMIN_TOKEN, call, newUser } from '../helpers';

// A known path called with a method it does not serve is a 405 METHOD_NOT_ALLOWED whose `Allow` names the methods
// it serves (HEAD wherever GET is); an unknown path stays a 404. Schemathesis counted 55 such cases answering 404.

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A concrete path for an OpenAPI path template: each parameter filled with a value its route accepts. */
const SAMPLES: Record<string, string> = { file: 'orders.csv', gateway: 'gateway_one', slot: 'gateway_one', outcome: 'pay', token: 'x'.repeat(43), name: 'a'.repeat(64) + '.png' };
const concrete = (template: string) => template.replace(/\{(\w+)\}/g, (_, name: string) => SAMPLES[name] ?? '1');

async function request(method: string, path: string, key: string) {
  const res = await SELF.fetch(`http://localhost${path}`, {
    method,
    headers: { 'X-API-Key': key, Authorization: `Bearer ${ADMIN_TOKEN}`, 'CF-Connecting-IP': freshIp() },
    redirect: 'manual',
  });
  return { status: res.status, allow: res.headers.get('Allow'), text: await res.text() };
}

describe('405 METHOD_NOT_ALLOWED', () => {
  it('the contract\'s examples: TRACE /stock, DELETE /wallet/balance', async () => {
    const user = await newUser();
    for (const [method, path] of [['TRACE', '/api/v2/stock'], ['DELETE', '/api/v2/wallet/balance']]) {
      const res = await request(method, path, user.key);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.allow).toBe('GET, HEAD');
      expect(JSON.parse(res.text)).toMatchObject({ success: false, code: 'METHOD_NOT_ALLOWED' });
    }
  });

  it('one path of each route file, with the methods it serves in Allow', async () => {
    const user = await newUser();
    const cases: Array<[string, string, string]> = [
      ['PUT', '/api/v2/api-keys', 'GET, HEAD, POST'],
      ['GET', '/api/v2/api-keys/1', 'DELETE'],
      ['DELETE', '/api/v2/user/profile', 'GET, HEAD, PUT'],
      ['GET', '/api/v2/user/password', 'POST'],
      ['POST', '/api/v2/stock/categories', 'GET, HEAD'],
      ['PATCH', '/api/v2/orders', 'GET, HEAD, POST'],
      ['DELETE', '/api/v2/orders/1/cancel', 'POST'],
      ['POST', '/api/v2/wallet/transactions', 'GET, HEAD'],
      ['PUT', '/api/v2/events/evt_1', 'GET, HEAD'],
      ['PATCH', '/api/v2/webhook-endpoints/1', 'DELETE'],
      ['GET', '/api/v2/auth/forgot-password', 'POST'],
      ['GET', '/api/v2/webhooks/gateway_one', 'POST'],
      ['HEAD', '/api/v2/webhooks/gateway_two', 'POST'],
      ['DELETE', '/api/v2/admin/users', 'GET, HEAD, POST'],
      ['DELETE', '/api/v2/admin/products/1', 'GET, HEAD, PATCH'],
      ['PUT', '/api/v2/admin/coupons/1', 'GET, HEAD, PATCH'],
      ['POST', '/api/v2/admin/exports/orders.csv', 'GET, HEAD'],
      ['GET', '/api/v2/admin/gateways/gateway_one/check', 'POST'],
      ['POST', '/api/v2/admin/gateway-events', 'GET, HEAD'],
      ['POST', '/api/v2/admin/emails', 'GET, HEAD'],
      ['POST', '/api/v2/admin/products/1/image', 'PUT, DELETE'],
      ['PUT', '/api/v2/admin/revoked-items', 'GET, HEAD'],
      ['DELETE', '/api/v2', 'GET, HEAD'],
      ['POST', '/', 'GET, HEAD'],
      ['POST', '/api/v2/openapi.json', 'GET, HEAD'],
      ['PUT', '/pay/1', 'GET, HEAD'],
      ['GET', '/pay/1/pay', 'POST'],
      ['POST', '/media/' + 'a'.repeat(64) + '.png', 'GET, HEAD'],
      ['POST', '/shop', 'GET, HEAD'],
      ['PUT', '/dashboard/sign-in', 'GET, HEAD, POST'],
      ['DELETE', '/dashboard/keys', 'GET, HEAD, POST'],
      ['GET', '/dashboard/sign-out', 'POST'],
      ['PUT', '/dashboard/console/products/1', 'GET, HEAD, POST'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await request(method, path, user.key);
      expect(res.status, `${method} ${path}: ${res.text.slice(0, 120)}`).toBe(405);
      expect(res.allow, `${method} ${path}`).toBe(allow);
    }
  });

  it('every path of the OpenAPI document, with every method it does not document', async () => {
    const user = await newUser();
    const doc = (await call('/openapi.json')).json as { paths: Record<string, Record<string, unknown>> };
    let checked = 0;
    const templates = Object.entries(doc.paths).map(([template, operations]) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      methods: Object.keys(operations).map((m) => m.toUpperCase()),
    }));
    for (const { template } of templates) {
      const path = concrete(template);
      // Every documented operation whose template this path matches (`/dashboard/verify-email/resend` is also a token).
      const documented = new Set(templates.filter((t) => t.pattern.test(path)).flatMap((t) => t.methods));
      if (documented.has('GET')) documented.add('HEAD');
      const allow = METHODS.filter((m) => documented.has(m)).join(', ');
      for (const method of METHODS.filter((m) => !documented.has(m))) {
        const res = await request(method, path, user.key);
        expect(res.status, `${method} ${template}: ${res.text.slice(0, 120)}`).toBe(405);
        expect(res.allow, `${method} ${template}`).toBe(allow);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('the method is decided before the credential (405 before 401); an unknown path stays a 404', async () => {
    // The contract's example: a method the path does not serve needs no credential, nor a good one.
    for (const headers of [{}, { 'X-API-Key': `sk_live_${'x'.repeat(40)}` }, { 'X-API-Key': 'nonsense' }] as Array<Record<string, string>>) {
      const res = await SELF.fetch('http://localhost/api/v2/wallet/balance', { method: 'DELETE', headers });
      expect(res.status, JSON.stringify(headers)).toBe(405);
      expect(res.headers.get('Allow')).toBe('GET, HEAD');
      expect(await res.json()).toMatchObject({ success: false, code: 'METHOD_NOT_ALLOWED' });
    }
    const admin = await SELF.fetch('http://localhost/api/v2/admin/users', { method: 'DELETE' });
    expect(admin.status).toBe(405);
    // A method the path serves still needs its key.
    expect((await SELF.fetch('http://localhost/api/v2/wallet/balance')).status).toBe(401);
    const user = await newUser();
    for (const [method, path] of [['GET', '/api/v2/nope'], ['DELETE', '/api/v2/orders/1/nope'], ['POST', '/dashboard/nope'], ['GET', '/nope']]) {
      const unknown = await request(method, path, user.key);
      expect(unknown.status, `${method} ${path}`).toBe(404);
      expect(unknown.allow).toBeNull();
    }
    // CORS preflights on the public stock routes keep their 204.
    expect((await SELF.fetch('http://localhost/api/v2/stock', { method: 'OPTIONS', headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'GET' } })).status).toBe(204);
  });
});
