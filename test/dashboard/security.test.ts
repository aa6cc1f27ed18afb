import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import wranglerToml from '../../wrangler.toml?raw';
import { createCheckedApp, SELF } from '../contract';
import { freshIp, newEmail, startOfRateWindow, ORIGIN, PASSWORD, sessionFrom, signedInUser, visit } from '../dashboard-helpers';
import { buy, call, newDeposit, newProduct, newUser } from '../helpers';
import { changedTables, snapshot } from '../snapshot';

// The dashboard against a hostile web: cross-site posts, framing, caching, guessing passwords, and sign-up switched off.

describe('CSRF: form posts only from the service itself', () => {
  it('refuses every dashboard POST from another origin (403), changing nothing', async () => {
    const user = await signedInUser({ balance: 100 });
    const product = await newProduct({ price: 2, stock: 5 });
    const order = await buy(user, product.id);
    expect(order.status).toBe(201);
    const keys = await call('/api-keys', { key: user.key });
    const deposit = await newDeposit(user);
    // An operator's session: the console's forms must refuse it too.
    await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { role: 'operator' } });
    const posts: Array<[string, Record<string, string>]> = [
      ['/dashboard/sign-in', { email: user.email, password: PASSWORD }],
      ['/dashboard/sign-up', { name: 'X', email: newEmail(), password: PASSWORD, password_confirmation: PASSWORD }],
      ['/dashboard/sign-out', {}],
      ['/dashboard/keys', { name: 'cross-site key' }],
      [`/dashboard/keys/${keys.json.data[0].id}/revoke`, {}],
      ['/dashboard/wallet/deposit', { amount: '10', gateway: 'gateway_one', crypto_currency: 'USDT', idempotency_key: 'csrf-1' }],
      ['/dashboard/shop', { product_id: String(product.id), quantity: '1', idempotency_key: 'csrf-2' }],
      [`/dashboard/orders/${order.json.data.id}/cancel`, { idempotency_key: 'csrf-3' }],
      ['/dashboard/profile', { name: 'Mallory', email: newEmail() }],
      ['/dashboard/password', { current_password: PASSWORD, new_password: 'pwned-password', new_password_confirmation: 'pwned-password' }],
      [`/dashboard/reset-password/${'A'.repeat(43)}`, { new_password: 'pwned-password', new_password_confirmation: 'pwned-password' }],
      ['/dashboard/forgot-password', { email: user.email }],
      ['/dashboard/verify-email/resend', {}],
      // The console's forms (refused before the session is even looked at).
      ['/dashboard/console/products', { name: 'X', sku: 'csrf-sku', price: '1', active: 'on', idempotency_key: 'csrf-4' }],
      [`/dashboard/console/products/${product.id}`, { name: 'X', sku: 'csrf-sku', price: '1' }],
      [`/dashboard/console/products/${product.id}/stock`, { items: 'CSRF-ITEM', idempotency_key: 'csrf-5' }],
      [`/dashboard/console/users/${user.id}/balance`, { amount: '100', description: 'csrf', idempotency_key: 'csrf-6' }],
      [`/dashboard/console/users/${user.id}/disable`, {}],
      [`/dashboard/console/users/${user.id}/enable`, {}],
      [`/dashboard/console/users/${user.id}/password-reset`, {}],
      [`/dashboard/console/deposits/${deposit.deposit_id}/mark-paid`, {}],
      [`/dashboard/console/deposits/${deposit.deposit_id}/refresh`, {}],
      [`/dashboard/console/users/${user.id}/discount`, { discount_percent: '90' }],
      ['/dashboard/console/coupons', { code: 'EVIL-100', percent_off: '100', active: 'on', idempotency_key: crypto.randomUUID() }],
      ['/dashboard/console/coupons/1', { percent_off: '100', active: 'on' }],
      [`/dashboard/console/orders/${order.json.data.id}/cancel`, { idempotency_key: 'csrf-7' }],
      ['/dashboard/console/payments/gateway_one/check', {}],
      // After the sale: a report, claim resolutions, the blocklist, a refund and holds.
      ['/dashboard/orders/1/items/0/report', { reason: 'cross-site' }],
      ['/dashboard/console/claims/1/replace', {}],
      ['/dashboard/console/claims/1/refund', {}],
      ['/dashboard/console/claims/1/reject', { note: 'x' }],
      ['/dashboard/console/claims/1/replace/confirm', {}],
      ['/dashboard/console/claims/1/refund/confirm', {}],
      ['/dashboard/console/claims/1/reject/confirm', { note: 'x' }],
      // Documents and referrals: billing details, the shop's invoicing and referral settings, a transfer.
      ['/dashboard/billing', { name: 'Mallory', country: 'DE' }],
      ['/dashboard/console/invoicing', { legal_name: 'Evil Ltd', tax_mode: 'none' }],
      ['/dashboard/console/referrals/settings', { percent: '50', hold_days: '0', min_transfer: '0.01' }],
      [`/dashboard/console/referrals/users/${user.id}/off`, {}],
      [`/dashboard/console/referrals/users/${user.id}/on`, {}],
      ['/dashboard/referrals/transfer', { idempotency_key: crypto.randomUUID() }],
      ['/dashboard/console/blocklist', { type: 'email', value: 'csrf@example.com' }],
      ['/dashboard/console/blocklist/1/remove', {}],
      ['/dashboard/console/orders/1/refund', { amount: '1', reason: 'x', idempotency_key: crypto.randomUUID() }],
      ['/dashboard/console/users/1/hold', { reason: 'x' }],
      ['/dashboard/console/users/1/hold/lift', {}],
      [`/dashboard/console/products/${product.id}/image`, {}],
      [`/dashboard/console/products/${product.id}/image/remove`, {}],
      [`/dashboard/console/products/${product.id}/items/1/delete`, { idempotency_key: 'csrf-9' }],
      [`/dashboard/shop/${product.id}/review`, { product_id: String(product.id), quantity: '1', idempotency_key: 'csrf-8' }],
      [`/dashboard/shop/${product.id}/pay`, { quantity: '1', expected_total: '2.00', amount: '2.00', gateway: 'gateway_one', idempotency_key: 'csrf-9' }],
    ];
    const attacks: Array<{ label: string; origin: string | null; headers?: Record<string, string> }> = [
      { label: 'another origin', origin: 'https://evil.example' },
      { label: 'a sibling port', origin: 'http://localhost:8080' },
      { label: 'an opaque origin', origin: 'null' },
      { label: 'no Origin at all', origin: null },
      { label: 'Sec-Fetch-Site: cross-site', origin: null, headers: { 'Sec-Fetch-Site': 'cross-site' } },
      { label: 'Sec-Fetch-Site: same-site', origin: null, headers: { 'Sec-Fetch-Site': 'same-site' } },
      { label: 'a multipart form', origin: 'https://evil.example', headers: { 'Content-Type': 'multipart/form-data; boundary=x' } },
      { label: 'a text/plain form', origin: 'https://evil.example', headers: { 'Content-Type': 'text/plain' } },
    ];
    // Every form post the service documents is in the list above.
    const doc = (await (await SELF.fetch(`${ORIGIN}/api/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).filter(([path, methods]) => path.startsWith('/dashboard') && 'post' in methods).map(([path]) => path);
    const template = (path: string) =>
      path
        .replace(/\/\d+(?=\/|$)/, '/{id}')
        .replace(/items\/\d+\/delete$/, 'items/{item_id}/delete')
        .replace(/items\/\d+\/report$/, 'items/{index}/report')
        .replace(/reset-password\/[^/]+$/, 'reset-password/{token}')
        .replace(/payments\/[^/]+\/check$/, 'payments/{slot}/check');
    expect(posts.map(([path]) => template(path)).sort()).toEqual(documented.sort());
    const before = await snapshot();
    for (const [path, form] of posts) {
      for (const { label, origin, headers } of attacks) {
        const res = await visit(path, { cookie: user.cookie, form, origin, headers });
        expect(res.status, `${label}: POST ${path}`).toBe(403);
        expect(res.setCookie).toBeNull();
        expect(res.text).toContain('sent from another site');
      }
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect((await visit('/dashboard', { cookie: user.cookie })).status).toBe(200);
  });

  it('lets a same-origin form through by its Origin or by Sec-Fetch-Site: same-origin', async () => {
    const user = await signedInUser();
    expect((await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'by origin' } })).status).toBe(200);
    const res = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'by fetch metadata' }, origin: null, headers: { 'Sec-Fetch-Site': 'same-origin' } });
    expect(res.status).toBe(200);
  });
});

describe('security headers', () => {
  it('every kind of dashboard response is uncacheable, unframeable, unsniffable and runs no script', async () => {
    const user = await signedInUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 2 });
    const order = (await buy(user, product.id)).json.data;
    const responses = {
      page: await visit('/dashboard', { cookie: user.cookie }),
      signIn: await visit('/dashboard/sign-in'),
      redirect: await visit('/dashboard/keys'),
      refusedPassword: await visit('/dashboard/sign-in', { form: { email: user.email, password: 'wrong password' } }),
      invalidForm: await visit('/dashboard/keys', { cookie: user.cookie, form: { name: '' } }),
      notFound: await visit('/dashboard/orders/999999999', { cookie: user.cookie }),
      crossSite: await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'x' }, origin: 'https://evil.example' }),
      export: await visit(`/dashboard/orders/${order.id}/export`, { cookie: user.cookie }),
      tooLarge: await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'x'.repeat(1024 * 1024 + 10) } }),
    };
    expect(Object.fromEntries(Object.entries(responses).map(([k, r]) => [k, r.status]))).toEqual({
      page: 200,
      signIn: 200,
      redirect: 303,
      refusedPassword: 401,
      invalidForm: 422,
      notFound: 404,
      crossSite: 403,
      export: 200,
      tooLarge: 413,
    });
    for (const [kind, res] of Object.entries(responses)) {
      const h = (name: string) => res.headers.get(name);
      expect(h('Cache-Control'), kind).toBe('no-store');
      expect(h('X-Content-Type-Options'), kind).toBe('nosniff');
      expect(h('Referrer-Policy'), kind).toBe('same-origin');
      expect(h('X-Frame-Options'), kind).toBe('DENY');
      const csp = h('Content-Security-Policy') ?? '';
      expect(csp, kind).toContain("frame-ancestors 'none'");
      expect(csp, kind).toContain("script-src 'none'");
      expect(csp, kind).toContain("style-src 'self'");
      expect(csp, kind).not.toContain('unsafe-inline');
      // A form-action directive would also stop "Add funds" from redirecting to the payment page.
      expect(csp, kind).not.toContain('form-action');
    }
    for (const res of [responses.page, responses.signIn, responses.refusedPassword, responses.invalidForm, responses.notFound]) {
      expect(res.text).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
    }
  });
});

describe('throttling sign-in and sign-up', () => {
  const attempt = (email: string, password: string, ip = freshIp()) => visit('/dashboard/sign-in', { form: { email, password }, ip });

  it('sign-in: more than 5 attempts a minute for one email answer 429 with Retry-After, even with the right password', async () => {
    const user = await newUser();
    await startOfRateWindow();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await attempt(user.email.toUpperCase(), `guess ${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const throttled = await attempt(user.email, PASSWORD);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('Retry-After')).toBe('60');
    expect(throttled.setCookie).toBeNull();
    expect(throttled.text).toContain('Too many attempts');
    const { results } = await env.DB.prepare('SELECT id FROM sessions WHERE user_id = ?').bind(user.id).all();
    expect(results).toHaveLength(0);
    // Another account is not locked out by it.
    const other = await newUser();
    expect((await attempt(other.email, PASSWORD)).status).toBe(303);
  });

  it('sign-in: more than 30 attempts a minute from one client IP answer 429', async () => {
    const ip = freshIp();
    await startOfRateWindow();
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) statuses.add((await attempt(`not-an-email-${i}`, 'x', ip)).status);
    expect([...statuses]).toEqual([422]);
    const user = await newUser();
    const throttled = await attempt(user.email, PASSWORD, ip);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('Retry-After')).toBe('60');
    expect((await attempt(user.email, PASSWORD, freshIp())).status).toBe(303);
  });

  it('sign-up: at most 10 a minute from one client IP', async () => {
    const ip = freshIp();
    const signUp = (email: string) => visit('/dashboard/sign-up', { form: { name: 'Ada', email, password: PASSWORD, password_confirmation: PASSWORD }, ip });
    await startOfRateWindow();
    const statuses = new Set<number>();
    for (let i = 0; i < 10; i++) statuses.add((await visit('/dashboard/sign-up', { form: { name: '', email: 'bad' }, ip })).status);
    expect([...statuses]).toEqual([422]);
    const email = newEmail();
    const throttled = await signUp(email);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('Retry-After')).toBe('60');
    expect(await env.DB.prepare('SELECT id FROM users WHERE email = ?').bind(email).first()).toBeNull();
  });

  it('wrangler.toml binds the limiters with the contract numbers', () => {
    const limits = Object.fromEntries(
      [...wranglerToml.matchAll(/name = "(\w+)"\s*namespace_id = "\d+"\s*simple = \{ limit = (\d+), period = (\d+) \}/g)].map(([, name, limit, period]) => [name, [Number(limit), Number(period)]]),
    );
    expect(limits).toMatchObject({ SIGN_IN_EMAIL_RATE_LIMITER: [5, 60], SIGN_IN_IP_RATE_LIMITER: [30, 60], SIGN_UP_IP_RATE_LIMITER: [10, 60] });
    expect(wranglerToml).toMatch(/^DASHBOARD_SIGNUP = "closed"$/m);
  });
});

describe('sign-up switched off', () => {
  it('is a 404 page and post unless DASHBOARD_SIGNUP=open; the operator still creates users', async () => {
    const app = createCheckedApp();
    for (const setting of ['closed', '', 'OPEN', undefined]) {
      const vars = { ...env, DASHBOARD_SIGNUP: setting };
      const email = newEmail();
      const form = new URLSearchParams({ name: 'Ada', email, password: PASSWORD, password_confirmation: PASSWORD }).toString();
      const page = await app.request('/dashboard/sign-up', {}, vars);
      const post = await app.request(
        '/dashboard/sign-up',
        { method: 'POST', body: form, headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: ORIGIN, 'CF-Connecting-IP': freshIp() } },
        vars,
      );
      expect([page.status, post.status], String(setting)).toEqual([404, 404]);
      expect(sessionFrom(post.headers.get('Set-Cookie'))).toBeUndefined();
      expect(await env.DB.prepare('SELECT id FROM users WHERE email = ?').bind(email).first()).toBeNull();
      expect(await (await app.request('/dashboard/sign-in', {}, vars)).text()).not.toContain('/dashboard/sign-up');
    }
    const open = await app.request('/dashboard/sign-up', {}, { ...env, DASHBOARD_SIGNUP: 'open' });
    expect(open.status).toBe(200);
    expect(await open.text()).toContain('Create account');
  });
});
