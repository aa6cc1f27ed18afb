// `node scripts/security-review.mjs --base http://127.0.0.1:8787`: the adversarial review of the running service,
// replayed as requests against `npm run dev`. Each check prints PASS or FAIL with the severity a failure would have;
// the exit code is 1 when any check fails (2 when it could not run). It makes its own users, products, coupons and
// keys through the admin API (ADMIN_TOKEN from .dev.vars, or --admin-token) and signs in as the demo operator
// (scripts/seed.mjs) to read the mailed links on the console's Emails page (EMAIL_PREVIEW, on under `npm run dev`).
// Plain Node 22, no dependency.
//
//   node scripts/security-review.mjs --base http://127.0.0.1:8815 [--admin-token T] [--only family,dates]
//
// What it replays: a limited key's children (spend, delete, make another; grandchildren; a revoked maker), a restricted
// key changing the email, `Host: evil.example` on forgot-password, old reset links after a reset, a password change, an
// email change and a disabled account, impossible calendar dates on every route and page that reads one, control
// characters in every name a person types, 405 + Allow for every method a known path does not serve (TRACE too), the
// error details, coupon and spend-limit races, a key lacking each scope on every route of the OpenAPI document,
// `X-Forwarded-For`, CSRF on dashboard and console forms, IDOR on orders, deposits, keys and webhook endpoints,
// forgot-password's identical answers and its limit, single-use links, expired keys, security headers, money inputs.
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { DEMO_OPERATOR } from './seed.mjs';

// ---------------------------------------------------------------------------------------------------------------
// Arguments and the HTTP client (node:http: fetch refuses TRACE and a chosen Host header).

function argument(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback;
}
function devVar(name) {
  if (!existsSync('.dev.vars')) return undefined;
  return readFileSync('.dev.vars', 'utf8').match(new RegExp(`^${name}=(.*)$`, 'm'))?.[1]?.trim();
}

const BASE = new URL(argument('base', 'http://127.0.0.1:8787'));
const ORIGIN = BASE.origin;
const ADMIN_TOKEN = argument('admin-token', devVar('ADMIN_TOKEN') ?? 'dev-admin-token');
const ONLY = argument('only', '')?.split(',').filter(Boolean) ?? [];
const RUN = Date.now().toString(36);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request; `body` an object is sent as JSON, a URLSearchParams as a form, a string as is. */
function request(method, path, { headers = {}, body, key, admin, cookie, ip } = {}) {
  const h = { ...headers };
  let payload;
  if (body instanceof URLSearchParams) {
    payload = body.toString();
    h['Content-Type'] ??= 'application/x-www-form-urlencoded';
  } else if (typeof body === 'string') payload = body;
  else if (body !== undefined) {
    payload = JSON.stringify(body);
    h['Content-Type'] ??= 'application/json';
  }
  if (key) h['X-API-Key'] = key;
  if (admin) h.Authorization = `Bearer ${ADMIN_TOKEN}`;
  if (cookie) h.Cookie = cookie;
  if (ip) h['CF-Connecting-IP'] = ip;
  if (payload !== undefined) h['Content-Length'] = Buffer.byteLength(payload);
  const url = new URL(path, BASE);
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
const api = (method, path, options) => request(method, `/api/v2${path}`, options);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let ipCounter = 0;
/** A fresh client address per use (the per-IP limits would refuse a long run from one address). */
const freshIp = () => `198.18.${(++ipCounter >> 8) & 255}.${ipCounter & 255}`;

// ---------------------------------------------------------------------------------------------------------------
// Results

const results = [];
let section = '';
function check(severity, name, ok, detail = '') {
  results.push({ section, severity, name, ok: Boolean(ok) });
  console.log(`${ok ? 'PASS' : 'FAIL'} [${severity}] ${section}: ${name}${!ok && detail ? `\n       ${detail}` : ''}`);
  return Boolean(ok);
}
const brief = (res) => `${res.status} ${res.text.slice(0, 300).replace(/\s+/g, ' ')}`;
const isError = (res, status, code) => res.status === status && res.json?.success === false && res.json?.code === code;

// ---------------------------------------------------------------------------------------------------------------
// Fixtures through the admin API

async function must(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${brief(res)}`);
  return res.json?.data;
}

async function newUser(label, balance = 0) {
  const email = `review-${RUN}-${label}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = `review password ${RUN}`;
  const data = await must(await api('POST', '/admin/users', { admin: true, body: { name: `Review ${label}`, email, password } }), 201, 'creating a user');
  if (balance > 0) {
    await must(
      await api('POST', `/admin/users/${data.id}/balance-adjustments`, { admin: true, body: { amount: balance, description: 'security review' } }),
      201,
      'funding a user',
    ).catch(async (err) => {
      // Some versions answer 200 for an adjustment.
      if (!/got 200/.test(err.message)) throw err;
    });
  }
  return { id: data.id, email, password, key: data.api_key };
}

async function newProduct(label, { price = 1, stock = 100 } = {}) {
  const data = await must(await api('POST', '/admin/products', { admin: true, body: { name: `Review ${label} ${RUN}`, sku: `REV-${label}-${RUN}`.toUpperCase(), price } }), 201, 'creating a product');
  const items = Array.from({ length: stock }, (_, i) => `REV-${RUN}-${label}-${i}-${Math.random().toString(36).slice(2)}`);
  const added = await api('POST', `/admin/products/${data.id}/stock`, { admin: true, body: { items } });
  if (added.status !== 200 && added.status !== 201) throw new Error(`adding stock: ${brief(added)}`);
  return { id: data.id };
}

async function newKey(maker, fields = {}) {
  const res = await api('POST', '/api-keys', { key: maker, body: { name: `review ${RUN}`, ...fields } });
  return { res, id: res.json?.data?.id, key: res.json?.data?.key };
}

const balanceOf = async (user) => (await api('GET', '/wallet/balance', { key: user.key })).json?.data?.balance;
const buy = (key, productId, quantity = 1, extra = {}) => api('POST', '/orders', { key, body: { product_id: productId, quantity, ...extra } });

/** A dashboard session for `email`/`password` (the cookie's name=value). */
async function signIn(email, password) {
  const res = await request('POST', '/dashboard/sign-in', {
    headers: { Origin: ORIGIN },
    body: new URLSearchParams({ email, password }),
    ip: freshIp(),
  });
  const cookie = [].concat(res.headers['set-cookie'] ?? [])[0]?.split(';')[0];
  if (res.status !== 303 || !cookie) throw new Error(`signing in ${email}: ${brief(res)}`);
  return cookie;
}

// ---------------------------------------------------------------------------------------------------------------
// The checks, one section each

const sections = {};

sections.family = async () => {
  // The finding: $10 a day, a child made, spent through, deleted, another made: $70 in a day.
  const user = await newUser('family', 200);
  const product = await newProduct('family', { stock: 200 });
  const parent = await newKey(user.key, { scopes: ['read', 'orders', 'keys'], spend_limit_per_day: 10 });
  check('Medium', 'a $10/day key with the keys scope is made', parent.res.status === 201, brief(parent.res));
  const before = await balanceOf(user);
  for (let i = 0; i < 7; i++) {
    const child = await newKey(parent.key);
    if (child.res.status !== 201) break;
    await buy(child.key, product.id, 10);
    await api('DELETE', `/api-keys/${child.id}`, { key: parent.key });
  }
  const spent = Math.round((before - (await balanceOf(user))) * 100) / 100;
  check('Medium', 'make a child, spend $10, delete it, 7 times: at most $10 leaves the wallet', spent <= 10, `spent ${spent}`);

  // A second family: child, grandchild, revoked child, the cascade.
  const user2 = await newUser('family2', 200);
  const maker = await newKey(user2.key, { scopes: ['read', 'orders', 'keys'], spend_limit_per_day: 10 });
  const child = await newKey(maker.key);
  check('Medium', 'a key made by a key shows created_by_key_id', child.res.json?.data?.created_by_key_id === maker.id, brief(child.res));
  const bought = await buy(child.key, product.id, 6);
  check('Medium', 'the child buys $6', bought.status === 201, brief(bought));
  const revoked = await api('DELETE', `/api-keys/${child.id}`, { key: maker.key });
  check('Medium', 'the maker revokes its child', revoked.status === 200, brief(revoked));
  const child2 = await newKey(maker.key);
  const over = await buy(child2.key, product.id, 6);
  check(
    'Medium',
    "a new child's $6 purchase counts the revoked child's $6: 403 SPEND_LIMIT_REACHED naming the maker, with resets_at",
    isError(over, 403, 'SPEND_LIMIT_REACHED') && over.json.errors?.key_id === maker.id && typeof over.json.errors?.resets_at === 'string',
    brief(over),
  );
  const grandchild = await newKey(child2.key);
  check('Medium', 'the child makes a grandchild', grandchild.res.status === 201, brief(grandchild.res));
  const gOver = await buy(grandchild.key, product.id, 5);
  check('Medium', 'the grandchild cannot pass the family limit ($6 + $5 > $10)', isError(gOver, 403, 'SPEND_LIMIT_REACHED'), brief(gOver));
  const gFits = await buy(grandchild.key, product.id, 4);
  check('Medium', 'the grandchild may spend what is left ($4)', gFits.status === 201, brief(gFits));
  const makerOver = await buy(maker.key, product.id, 1);
  check('Medium', "the maker's own purchase counts its grandchild's: $1 more is refused", isError(makerOver, 403, 'SPEND_LIMIT_REACHED'), brief(makerOver));
  const killMaker = await api('DELETE', `/api-keys/${maker.id}`, { key: user2.key });
  check('Medium', 'the account revokes the maker', killMaker.status === 200, brief(killMaker));
  const [c2, g] = await Promise.all([api('GET', '/wallet/balance', { key: child2.key }), api('GET', '/wallet/balance', { key: grandchild.key })]);
  check('Medium', 'revoked maker: its child answers 401 at once', isError(c2, 401, 'UNAUTHORIZED'), brief(c2));
  check('Medium', 'revoked maker: its grandchild answers 401 at once', isError(g, 401, 'UNAUTHORIZED'), brief(g));
  const list = await api('GET', '/api-keys', { key: user2.key });
  const ids = (list.json?.data ?? []).map((k) => k.id);
  check('Medium', 'GET /api-keys no longer lists the dead child or grandchild', !ids.includes(child2.id) && !ids.includes(grandchild.id), JSON.stringify(ids));
};

sections.wider = async () => {
  const user = await newUser('wider');
  const maker = await newKey(user.key, { scopes: ['read', 'keys'], spend_limit_per_day: 5, allowed_ips: ['203.0.113.0/24'], expires_at: '2098-01-01T00:00:00Z' });
  const ip = '203.0.113.9';
  const attempts = [
    ['a scope it lacks', { scopes: ['read', 'orders'] }],
    ['a higher limit', { spend_limit_per_day: 6 }],
    ['no limit', { spend_limit_per_day: null }],
    ['a wider IP range', { allowed_ips: ['203.0.0.0/16'] }],
    ['any address', { allowed_ips: null }],
    ['a later expiry', { expires_at: '2099-01-01T00:00:00Z' }],
    ['no expiry', { expires_at: null }],
  ];
  for (const [what, fields] of attempts) {
    const res = await api('POST', '/api-keys', { key: maker.key, ip, body: { name: 'wider', ...fields } });
    check('High', `a key cannot make a key wider than itself: ${what} → 403 INSUFFICIENT_SCOPE`, isError(res, 403, 'INSUFFICIENT_SCOPE'), brief(res));
  }
};

sections.email = async () => {
  const user = await newUser('email');
  const restricted = await newKey(user.key, { scopes: ['read', 'account'] });
  const target = `taken-${RUN}@example.com`;
  const none = await api('PUT', '/user/profile', { key: restricted.key, body: { email: target } });
  check('Medium', 'a restricted key changing the email without current_password → 422 errors.current_password', isError(none, 422, 'VALIDATION_FAILED') && none.json.errors?.current_password, brief(none));
  const wrong = await api('PUT', '/user/profile', { key: restricted.key, body: { email: target, current_password: 'not the password' } });
  check('Medium', 'with a wrong current_password → 422 errors.current_password', isError(wrong, 422, 'VALIDATION_FAILED') && wrong.json.errors?.current_password, brief(wrong));
  const profile = await api('GET', '/user/profile', { key: user.key });
  check('Medium', 'the email did not change', profile.json?.data?.email === user.email, brief(profile));
  const right = await api('PUT', '/user/profile', { key: restricted.key, body: { email: target, current_password: user.password } });
  check('Medium', 'with the right current_password the change goes through', right.status === 200, brief(right));
  for (const [what, fields] of [
    ['a spend limit', { spend_limit_per_day: 5 }],
    ['allowed IPs', { allowed_ips: ['198.51.100.0/24'] }],
    ['an expiry', { expires_at: '2098-01-01T00:00:00Z' }],
  ]) {
    const key = await newKey(user.key, fields);
    const res = await api('PUT', '/user/profile', { key: key.key, ip: '198.51.100.4', body: { email: `other-${RUN}-${Math.random().toString(36).slice(2, 6)}@example.com` } });
    check('Medium', `a key with every scope but ${what} needs current_password too`, isError(res, 422, 'VALIDATION_FAILED') && res.json.errors?.current_password, brief(res));
    await api('DELETE', `/api-keys/${key.id}`, { key: user.key });
  }
  const unrestricted = await api('PUT', '/user/profile', { key: user.key, body: { email: `free-${RUN}@example.com` } });
  check('Info', 'an unrestricted key changes the email as before', unrestricted.status === 200, brief(unrestricted));
};

/** The link of the newest email of `template` to `to`, from the console's Emails page (EMAIL_PREVIEW). */
async function mailedLink(operator, to, template) {
  for (let i = 0; i < 40; i++) {
    const list = await api('GET', `/admin/emails?to=${encodeURIComponent(to)}&template=${template}`, { admin: true });
    const email = list.json?.data?.[0];
    if (email && email.status !== 'queued') {
      const page = await request('GET', `/dashboard/console/emails/${email.id}`, { cookie: operator });
      const link = page.text.match(/https?:\/\/[^\s"'<>]*\/dashboard\/reset-password\/[A-Za-z0-9_-]+/)?.[0];
      return { email, link, page };
    }
    await sleep(500);
  }
  return {};
}

sections.host = async (ctx) => {
  const user = await newUser('host');
  const res = await api('POST', '/auth/forgot-password', { headers: { Host: 'evil.example' }, ip: freshIp(), body: { email: user.email } });
  check('Low', 'forgot-password with Host: evil.example answers 202', res.status === 202, brief(res));
  const { email, link } = await mailedLink(ctx.operator, user.email, 'password_reset');
  if (!check('Low', 'the reset email was sent (console Emails page)', email?.status === 'sent' && link, JSON.stringify(email))) return;
  check('Low', `the mailed link ignores Host (${link})`, !link.includes('evil.example'), link);
  const local = new URL(link);
  check('Low', 'the mailed link points at the shop (PUBLIC_BASE_URL: this server, port included)', local.port === BASE.port && ['localhost', '127.0.0.1'].includes(local.hostname), link);
  const page = await request('GET', local.pathname);
  check('Low', 'the mailed link opens the reset page', page.status === 200, brief(page));
  ctx.mailedReset = { user, path: local.pathname };
};

/** A reset link made by the operator (its path). */
async function resetLink(user) {
  const data = await must(await api('POST', `/admin/users/${user.id}/password-reset`, { admin: true }), 201, 'making a reset link');
  return new URL(data.url).pathname;
}
const opens = async (path) => (await request('GET', path)).status;
const setPassword = (path, password) =>
  request('POST', path, { headers: { Origin: ORIGIN }, body: new URLSearchParams({ new_password: password, new_password_confirmation: password }) });

sections.resets = async (ctx) => {
  const a = await newUser('reset-a');
  const [l1, l2] = [await resetLink(a), await resetLink(a)];
  check('Low', 'a fresh reset link opens (200)', (await opens(l1)) === 200);
  const used = await setPassword(l1, `new password ${RUN}`);
  check('Low', 'a reset link sets the password (303)', used.status === 303, brief(used));
  check('Low', 'the used link is dead (single use)', (await opens(l1)) === 404);
  check('Low', 'using one link retires the other links of the user', (await opens(l2)) === 404);

  const b = await newUser('reset-b');
  const lb = await resetLink(b);
  const changed = await api('POST', '/user/password', { key: b.key, body: { current_password: b.password, new_password: `other password ${RUN}`, new_password_confirmation: `other password ${RUN}` } });
  check('Low', 'a password change (POST /user/password) succeeds', changed.status === 200, brief(changed));
  check('Low', 'a password change retires old reset links', (await opens(lb)) === 404);

  const c = await newUser('reset-c');
  const lc = await resetLink(c);
  const moved = await api('PUT', '/user/profile', { key: c.key, body: { email: `moved-${RUN}@example.com` } });
  check('Low', 'an email change succeeds', moved.status === 200, brief(moved));
  check('Low', 'an email change retires old reset links', (await opens(lc)) === 404);

  const d = await newUser('reset-d');
  const ld = await resetLink(d);
  await must(await api('PATCH', `/admin/users/${d.id}`, { admin: true, body: { disabled: true } }), 200, 'disabling');
  check('Low', 'disabling the account retires its reset links', (await opens(ld)) === 404);
  await must(await api('PATCH', `/admin/users/${d.id}`, { admin: true, body: { disabled: false } }), 200, 'enabling');
  check('Low', 'enabling it again brings none back', (await opens(ld)) === 404);
  const attempt = await setPassword(ld, `sneaky password ${RUN}`);
  check('Low', 'posting to a retired link changes nothing (404)', attempt.status === 404, brief(attempt));

  if (ctx.mailedReset) {
    const { path } = ctx.mailedReset;
    const first = await setPassword(path, `mailed password ${RUN}`);
    const again = await setPassword(path, `mailed again ${RUN}`);
    check('Low', 'a mailed reset link works once, then 404', first.status === 303 && again.status === 404, `${first.status} then ${again.status}`);
  }
};

const BAD_DATES = ['2026-13-01', '2026-00-10', '2026-02-32', '2026-02-30', '2026-1-1', '20261301'];

sections.dates = async (ctx) => {
  // Every operation of the OpenAPI document that takes a `from`/`to` day (API, exports, console pages), and the
  // console's CSV links.
  const targets = [];
  for (const [template, ops] of Object.entries(ctx.doc.paths)) {
    const params = (ops.get?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    if (!params.includes('from') || !params.includes('to')) continue;
    for (const file of template.includes('{file}') ? ['orders.csv', 'deposits.csv', 'transactions.csv'] : [null]) {
      const path = file ? template.replace('{file}', file) : template;
      if (path.includes('{')) continue;
      for (const param of ['from', 'to']) targets.push({ path, param });
    }
  }
  const paths = new Set(targets.map((t) => t.path));
  check('Low', `the OpenAPI document names ${paths.size} routes and pages that read a day: ${[...paths].join(', ')}`, paths.size >= 9);
  for (const t of targets) {
    for (const day of BAD_DATES) {
      const onPage = t.path.startsWith('/dashboard/');
      const res = await request('GET', `${t.path}?${t.param}=${day}`, onPage ? { cookie: ctx.operator } : { admin: true });
      const ok = onPage ? res.status === 422 : isError(res, 422, 'VALIDATION_FAILED') && res.json.errors?.[t.param];
      check('Low', `GET ${t.path}?${t.param}=${day} → 422${onPage ? '' : ` on ${t.param}`}`, ok, brief(res));
    }
    const fine = await request('GET', `${t.path}?${t.param}=2026-02-28`, t.path.startsWith('/dashboard/') ? { cookie: ctx.operator } : { admin: true });
    check('Low', `GET ${t.path}?${t.param}=2026-02-28 (a real day) → 200`, fine.status === 200, brief(fine));
  }
};

const CONTROLS = { NUL: '\u0000', ESC: '\u001b', CR: '\r', LF: '\n', TAB: '\t', DEL: '\u007f', 'U+0085': '\u0085', 'U+202E': '\u202e', 'U+2066': '\u2066' };

sections.text = async (ctx) => {
  const user = await newUser('text');
  const product = await newProduct('text', { stock: 1 });
  const coupon = { percent_off: 10 };
  for (const [label, ch] of Object.entries(CONTROLS)) {
    const bad = `Eve${ch}il`;
    const cases = [
      ['POST /admin/users name', () => api('POST', '/admin/users', { admin: true, body: { name: bad, email: `ctl-${RUN}-${Math.random().toString(36).slice(2, 7)}@example.com`, password: 'long enough password' } }), 'name'],
      ['PATCH /admin/users/{id} name', () => api('PATCH', `/admin/users/${user.id}`, { admin: true, body: { name: bad } }), 'name'],
      ['PUT /user/profile name', () => api('PUT', '/user/profile', { key: user.key, body: { name: bad } }), 'name'],
      ['POST /api-keys name', () => api('POST', '/api-keys', { key: user.key, body: { name: bad } }), 'name'],
      ['POST /admin/products name', () => api('POST', '/admin/products', { admin: true, body: { name: bad, sku: `CTL-${RUN}-${label}`, price: 1 } }), 'name'],
      ['POST /admin/products sku', () => api('POST', '/admin/products', { admin: true, body: { name: 'Fine', sku: `CTL${ch}${RUN}`, price: 1 } }), 'sku'],
      ['POST /admin/products category', () => api('POST', '/admin/products', { admin: true, body: { name: 'Fine', sku: `CTLC-${RUN}-${label}`, category: bad, price: 1 } }), 'category'],
      ['PATCH /admin/products/{id} name', () => api('PATCH', `/admin/products/${product.id}`, { admin: true, body: { name: bad } }), 'name'],
      ['POST /admin/coupons code', () => api('POST', '/admin/coupons', { admin: true, body: { code: `CTL${ch}X`, ...coupon } }), 'code'],
      ['POST /admin/products/{id}/stock items', () => api('POST', `/admin/products/${product.id}/stock`, { admin: true, body: { items: [`ITEM${ch}X-${RUN}`] } }), 'items'],
      ['POST /admin/users/{id}/balance-adjustments description', () => api('POST', `/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: 1, description: bad } }), 'description'],
    ];
    if (ch !== '\n') {
      cases.push(['PATCH /admin/products/{id} description', () => api('PATCH', `/admin/products/${product.id}`, { admin: true, body: { description: bad } }), 'description']);
    }
    for (const [what, send, field] of cases) {
      const res = await send();
      const fieldNamed = Object.keys(res.json?.errors ?? {}).some((k) => k === field || k.startsWith(`${field}.`) || k.startsWith(`${field}[`));
      check('Low', `${label} in ${what} → 422 on ${field}`, isError(res, 422, 'VALIDATION_FAILED') && fieldNamed, brief(res));
    }
    // The dashboard's sign-up and the console's product form: the same validator.
    const signUp = await request('POST', '/dashboard/sign-up', {
      headers: { Origin: ORIGIN },
      ip: freshIp(),
      body: new URLSearchParams({ name: bad, email: `ctl-su-${RUN}-${Math.random().toString(36).slice(2, 7)}@example.com`, password: 'long enough password', password_confirmation: 'long enough password' }),
    });
    check('Low', `${label} in the dashboard sign-up name → 422 page`, signUp.status === 422 || signUp.status === 404, `${signUp.status}`);
    const consoleProduct = await request('POST', '/dashboard/console/products', {
      cookie: ctx.operator,
      headers: { Origin: ORIGIN },
      body: new URLSearchParams({ name: bad, sku: `CTLF-${RUN}-${label}`, price: '1.00', category: '', allowed_quantities: '' }),
    });
    check('Low', `${label} in the console's new product name → 422 page`, consoleProduct.status === 422, `${consoleProduct.status}`);
  }
  const crlf = await api('PATCH', `/admin/products/${product.id}`, { admin: true, body: { description: 'line one\r\nline two\nline three' } });
  check('Low', 'a product description keeps line feeds (CR LF stored as LF)', crlf.status === 200 && crlf.json?.data?.description === 'line one\nline two\nline three', brief(crlf));
};

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE'];
/** A value each path parameter's route accepts. */
const SAMPLES = { file: 'orders.csv', gateway: 'gateway_one', slot: 'gateway_one', outcome: 'pay', token: 'x'.repeat(43), name: `${'a'.repeat(64)}.png` };
const concrete = (template) => template.replace(/\{(\w+)\}/g, (_, name) => SAMPLES[name] ?? '1');

sections.methods = async (ctx) => {
  // Asked as a client with a valid key and the admin token would (a bad key is a 401 before anything else, by design).
  const keys = [];
  for (let i = 0; i < 4; i++) keys.push((await newUser(`methods-${i}`)).key);
  const templates = Object.entries(ctx.doc.paths).map(([template, ops]) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    methods: Object.keys(ops).map((m) => m.toUpperCase()),
  }));
  let probes = 0;
  for (const { template } of templates) {
    const path = concrete(template);
    // Every documented operation this path matches (`/dashboard/verify-email/resend` is also a token).
    const documented = new Set(templates.filter((t) => t.pattern.test(path)).flatMap((t) => t.methods));
    if (documented.has('GET')) documented.add('HEAD');
    const expected = METHODS.filter((m) => documented.has(m)).join(', ');
    for (const method of METHODS.filter((m) => !documented.has(m))) {
      const key = keys[probes++ % keys.length];
      const res = await request(method, path, { key, admin: true, ip: freshIp() });
      const ok = res.status === 405 && res.headers.allow === expected && (method === 'HEAD' || res.json?.code === 'METHOD_NOT_ALLOWED');
      check('Low', `${method} ${path} → 405, Allow: ${expected}`, ok, `${brief(res)} Allow: ${res.headers.allow}`);
    }
  }
  for (const [method, path] of [['TRACE', '/api/v2/no-such-path'], ['GET', '/api/v2/orders/1/nope'], ['POST', '/dashboard/nope']]) {
    const unknown = await request(method, path, { key: keys[0] });
    check('Low', `an unknown path stays 404 (${method} ${path})`, unknown.status === 404 && !unknown.headers.allow, brief(unknown));
  }
  const badKey = await request('DELETE', '/api/v2/wallet/balance', { key: `sk_live_${'x'.repeat(40)}` });
  check('Info', 'a bad key on a known path with a wrong method is still a 401 (the credential first)', isError(badKey, 401, 'UNAUTHORIZED'), brief(badKey));
  check('Info', `probed ${probes} method/path pairs`, probes > 200);
};

sections.details = async () => {
  const user = await newUser('details', 5);
  const product = await newProduct('details', { stock: 5 });
  const fenced = await newKey(user.key, { allowed_ips: ['203.0.113.7'] });
  const res = await api('GET', '/wallet/balance', { key: fenced.key, ip: '198.51.100.23' });
  check('Low', 'IP_NOT_ALLOWED says the address seen (errors.ip)', isError(res, 403, 'IP_NOT_ALLOWED') && JSON.stringify(res.json.errors?.ip) === '["198.51.100.23"]', brief(res));
  const spoofed = await api('GET', '/wallet/balance', { key: fenced.key, ip: '198.51.100.23', headers: { 'X-Forwarded-For': '203.0.113.7', 'X-Real-IP': '203.0.113.7', Forwarded: 'for=203.0.113.7' } });
  check('Medium', 'X-Forwarded-For / X-Real-IP / Forwarded do not pass an IP list', isError(spoofed, 403, 'IP_NOT_ALLOWED'), brief(spoofed));
  const allowed = await api('GET', '/wallet/balance', { key: fenced.key, ip: '203.0.113.7' });
  check('Info', 'the allowed address passes', allowed.status === 200, brief(allowed));
  const missing = await api('POST', '/orders', { key: user.key, body: { product_id: product.id } });
  check('Info', 'a missing quantity says "quantity is required"', isError(missing, 422, 'VALIDATION_FAILED') && JSON.stringify(missing.json.errors?.quantity ?? []).includes('quantity is required'), brief(missing));
  const noProduct = await api('POST', '/orders', { key: user.key, body: { quantity: 1 } });
  check('Info', 'a missing product_id says "product_id is required"', JSON.stringify(noProduct.json?.errors?.product_id ?? []).includes('product_id is required'), brief(noProduct));
  const receipts = await api('PUT', '/user/profile', { key: user.key, body: { email_receipts: 'yes' } });
  check('Info', 'a non-boolean email_receipts: "email_receipts must be a boolean"', isError(receipts, 422, 'VALIDATION_FAILED') && JSON.stringify(receipts.json.errors?.email_receipts) === '["email_receipts must be a boolean"]', brief(receipts));
};

sections.races = async () => {
  const product = await newProduct('race', { price: 1, stock: 200 });
  const buyer = await newUser('race', 200);
  const code = `REV${RUN}`.toUpperCase().slice(0, 20);
  await must(await api('POST', '/admin/coupons', { admin: true, body: { code, percent_off: 10, max_redemptions: 5, max_per_user: null } }), 201, 'creating a coupon');
  const results40 = await Promise.all(Array.from({ length: 40 }, () => buy(buyer.key, product.id, 1, { coupon: code })));
  const won = results40.filter((r) => r.status === 201).length;
  const refused = results40.filter((r) => isError(r, 400, 'COUPON_INVALID')).length;
  check('High', `40 parallel purchases on max_redemptions 5 → exactly 5 orders (got ${won}, ${refused} COUPON_INVALID)`, won === 5 && refused === 35, results40.filter((r) => r.status !== 201 && r.status !== 400).map(brief).join(' | '));

  const perUser = `${code}U`.slice(0, 24);
  await must(await api('POST', '/admin/coupons', { admin: true, body: { code: perUser, percent_off: 10, max_per_user: 1 } }), 201, 'creating a coupon');
  const one = await Promise.all(Array.from({ length: 40 }, () => buy(buyer.key, product.id, 1, { coupon: perUser })));
  const onceWon = one.filter((r) => r.status === 201).length;
  check('High', `40 parallel purchases on max_per_user 1 → exactly 1 order (got ${onceWon})`, onceWon === 1);

  const spender = await newUser('limit', 100);
  const limited = await newKey(spender.key, { spend_limit_per_day: 10 });
  const before = await balanceOf(spender);
  const thirty = await Promise.all(Array.from({ length: 30 }, () => buy(limited.key, product.id, 1)));
  const passed = thirty.filter((r) => r.status === 201).length;
  const spent = Math.round((before - (await balanceOf(spender))) * 100) / 100;
  check('High', `30 parallel $1 purchases on a $10/day key → exactly 10 orders, $10 charged (got ${passed}, $${spent})`, passed === 10 && spent === 10);

  const poor = await newUser('balance', 3);
  const ten = await Promise.all(Array.from({ length: 10 }, () => buy(poor.key, product.id, 1)));
  const paid = ten.filter((r) => r.status === 201).length;
  check('High', `10 parallel $1 purchases on a $3 wallet → exactly 3 (got ${paid}), balance 0`, paid === 3 && (await balanceOf(poor)) === 0);
};

const BODIES = {
  'post /api/v2/api-keys': { name: 'scoped' },
  'put /api/v2/user/profile': { name: 'Scoped' },
  'post /api/v2/user/password': { current_password: 'whatever', new_password: 'long enough one', new_password_confirmation: 'long enough one' },
  'post /api/v2/orders': { product_id: 1, quantity: 1 },
  'post /api/v2/orders/{id}/items/{index}/report': { reason: 'The code does not work.' },
  'post /api/v2/wallet/deposit': { amount: 10, gateway: 'gateway_one' },
  'post /api/v2/webhook-endpoints': { url: 'https://example.com/hook', events: ['*'] },
};
const QUERIES = { 'get /api/v2/orders/quote': '?product_id=1&quantity=1' };

sections.scopes = async (ctx) => {
  const ALL = ['read', 'orders', 'deposits', 'account', 'keys', 'webhooks'];
  const keys = {};
  for (const scope of ALL) {
    const owner = await newUser(`scope-${scope}`);
    const live = await newKey(owner.key, { scopes: ALL.filter((s) => s !== scope) });
    const test = await newKey(owner.key, { scopes: ALL.filter((s) => s !== scope), mode: 'test' });
    keys[scope] = { live: live.key, test: test.key };
  }
  let routes = 0;
  for (const [path, ops] of Object.entries(ctx.doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const scope = op['x-required-scope'];
      if (!scope) continue;
      routes++;
      const key = path.startsWith('/api/v2/test/') ? keys[scope].test : keys[scope].live;
      const filled = path.replace(/\{(\w+)\}/g, (_, name) => (name === 'id' && path.startsWith('/api/v2/events/') ? `evt_${'a'.repeat(24)}` : '1'));
      const concrete = `${filled}${QUERIES[`${method} ${path}`] ?? ''}`;
      // A body the route accepts, so that the only reason left to refuse is the scope.
      const body = ['post', 'put', 'patch'].includes(method) ? (BODIES[`${method} ${path}`] ?? {}) : undefined;
      const viaHeader = await request(method.toUpperCase(), concrete, { key, body });
      const viaQuery = await request(method.toUpperCase(), `${concrete}${concrete.includes('?') ? '&' : '?'}api_key=${key}`, { body });
      const replay = body ? await request(method.toUpperCase(), concrete, { key, body, headers: { 'Idempotency-Key': `review-${RUN}-${routes}` } }) : viaHeader;
      const refused = (res) => isError(res, 403, 'INSUFFICIENT_SCOPE') && JSON.stringify(res.json.errors?.scope) === JSON.stringify([scope]);
      check('High', `${method.toUpperCase()} ${path} without "${scope}" → 403 INSUFFICIENT_SCOPE (header, query${body ? ', Idempotency-Key' : ''})`, refused(viaHeader) && refused(viaQuery) && refused(replay), `${brief(viaHeader)} | ${brief(viaQuery)}`);
      if (method === 'get') {
        const head = await request('HEAD', concrete, { key });
        check('High', `HEAD ${path} without "read" → 403`, head.status === 403, `${head.status}`);
      }
    }
  }
  check('High', `the OpenAPI document lists key routes with x-required-scope (${routes})`, routes >= 20);
};

sections.csrf = async (ctx) => {
  const user = await newUser('csrf');
  const cookie = await signIn(user.email, user.password);
  const combos = [
    ['no Origin, no Sec-Fetch-Site', {}],
    ['Origin: evil.example', { Origin: 'http://evil.example' }],
    ['Origin: null', { Origin: 'null' }],
    ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'Sec-Fetch-Site': 'same-site' }],
    ['Origin: evil + Sec-Fetch-Site: cross-site', { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' }],
    ['Origin: a look-alike host', { Origin: `${ORIGIN}.evil.example` }],
  ];
  const forms = [
    ['/dashboard/profile', new URLSearchParams({ name: 'CSRF victim', email: user.email })],
    ['/dashboard/keys', new URLSearchParams({ name: 'csrf key', idempotency_key: `csrf-${RUN}` })],
    ['/dashboard/wallet/deposit', new URLSearchParams({ amount: '10', gateway: 'gateway_one' })],
    ['/dashboard/sign-out', new URLSearchParams({})],
  ];
  for (const [form, body] of forms) {
    for (const [what, headers] of combos) {
      for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
        const res = await request('POST', form, { cookie, headers: { ...headers, 'Content-Type': type }, body: type.startsWith('multipart') ? '--x--\r\n' : body.toString() });
        check('Medium', `POST ${form} (${type.split(';')[0]}) with ${what} → 403`, res.status === 403, `${res.status}`);
      }
    }
  }
  const profile = await api('GET', '/user/profile', { key: user.key });
  const keyList = await api('GET', '/api-keys', { key: user.key });
  check('Medium', 'nothing changed: name, keys, session', profile.json?.data?.name === 'Review csrf' && keyList.json?.data?.length === 1 && (await request('GET', '/dashboard', { cookie })).status === 200);
  const consoleForm = await request('POST', `/dashboard/console/users/${user.id}/disable`, { cookie: ctx.operator, headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: '' });
  check('Medium', "a console form (Disable account) without Origin → 403", consoleForm.status === 403, `${consoleForm.status}`);
};

sections.idor = async () => {
  const product = await newProduct('idor', { stock: 10 });
  const owner = await newUser('idor-a', 20);
  const other = await newUser('idor-b', 20);
  const order = await buy(owner.key, product.id, 1);
  const orderId = order.json?.data?.id;
  const deposit = await api('POST', '/wallet/deposit', { key: owner.key, body: { amount: 10, gateway: 'gateway_one' } });
  const depositId = deposit.json?.data?.id ?? deposit.json?.data?.deposit_id;
  const keys = await api('GET', '/api-keys', { key: owner.key });
  const keyId = keys.json?.data?.[0]?.id;
  const hook = await api('POST', '/webhook-endpoints', { key: owner.key, body: { url: 'https://example.com/hook', events: ['*'] } });
  const hookId = hook.json?.data?.id;
  check('Info', 'the owner has an order, a deposit, a key and a webhook endpoint', orderId && depositId && keyId && hookId, `${brief(order)} | ${brief(deposit)} | ${brief(hook)}`);
  const probes = [
    ['GET', `/orders/${orderId}`],
    ['GET', `/orders/${orderId}/export`],
    ['POST', `/orders/${orderId}/cancel`],
    ['GET', `/wallet/deposits/${depositId}/status`],
    ['DELETE', `/api-keys/${keyId}`],
    ['DELETE', `/webhook-endpoints/${hookId}`],
  ];
  for (const [method, path] of probes) {
    const res = await api(method, path, { key: other.key });
    check('High', `another user's ${method} ${path} → 404`, isError(res, 404, 'NOT_FOUND'), brief(res));
  }
  const cookie = await signIn(other.email, other.password);
  for (const path of [`/dashboard/orders/${orderId}`, `/dashboard/orders/${orderId}/export`]) {
    const res = await request('GET', path, { cookie });
    check('High', `another user's ${path} in the dashboard → 404`, res.status === 404, `${res.status}`);
  }
  const revoke = await request('POST', `/dashboard/keys/${keyId}/revoke`, { cookie, headers: { Origin: ORIGIN }, body: new URLSearchParams({}) });
  check('High', "another user's key revoked from the dashboard → 404", revoke.status === 404, `${revoke.status}`);
  const stillThere = await api('GET', `/orders/${orderId}`, { key: owner.key });
  check('High', "the owner's order and key are untouched", stillThere.status === 200);
  const consoleAsUser = await request('GET', '/dashboard/console', { cookie });
  check('High', 'a non-operator session gets 404 on the console', consoleAsUser.status === 404, `${consoleAsUser.status}`);
};

sections.forgot = async () => {
  const user = await newUser('forgot');
  const ip = freshIp();
  const real = await api('POST', '/auth/forgot-password', { ip, body: { email: user.email } });
  const unknown = await api('POST', '/auth/forgot-password', { ip, body: { email: `nobody-${RUN}@example.com` } });
  check('Low', 'forgot-password answers a real and an unknown address identically (status and body)', real.status === 202 && real.status === unknown.status && real.text === unknown.text, `${brief(real)} | ${brief(unknown)}`);
  const pageIp = freshIp();
  const pages = await Promise.all(
    [user.email, `nobody-${RUN}@example.com`].map((email) => request('POST', '/dashboard/forgot-password', { ip: pageIp, headers: { Origin: ORIGIN }, body: new URLSearchParams({ email }) })),
  );
  const strip = (t) => t.replace(/value="[^"]*"/g, '').replace(/nonce-[A-Za-z0-9+/=]+/g, '');
  check('Low', "the dashboard's forgot-password page is the same for both", pages[0].status === pages[1].status && strip(pages[0].text) === strip(pages[1].text), `${pages[0].status} ${pages[1].status}`);
  const limitIp = freshIp();
  const posts = [];
  for (let i = 0; i < 11; i++) posts.push(await api('POST', '/auth/forgot-password', { ip: limitIp, body: { email: `nobody-${i}-${RUN}@example.com` } }));
  check('Low', 'the 11th forgot-password post of a minute from one address → 429 with Retry-After', isError(posts[10], 429, 'RATE_LIMITED') && posts[10].headers['retry-after'], brief(posts[10]));
};

sections.keys = async () => {
  const user = await newUser('expiry');
  const soon = new Date(Date.now() + 3000).toISOString();
  const short = await newKey(user.key, { expires_at: soon });
  const fresh = await api('GET', '/wallet/balance', { key: short.key });
  await sleep(3500);
  const expired = await api('GET', '/wallet/balance', { key: short.key });
  check('Medium', 'a key works until its expiry, then 401', fresh.status === 200 && isError(expired, 401, 'UNAUTHORIZED'), `${fresh.status} then ${brief(expired)}`);
  const noKey = await api('GET', '/wallet/balance', {});
  check('Medium', 'no key → 401', isError(noKey, 401, 'UNAUTHORIZED'), brief(noKey));
  const session = await signIn(user.email, user.password);
  const sessionOnApi = await api('GET', '/wallet/balance', { cookie: session });
  check('Medium', 'a dashboard session does not authenticate the API', isError(sessionOnApi, 401, 'UNAUTHORIZED'), brief(sessionOnApi));
  const keyOnDashboard = await request('GET', '/dashboard', { key: user.key });
  check('Medium', 'an API key does not open the dashboard', keyOnDashboard.status === 303, `${keyOnDashboard.status}`);
};

sections.headers = async () => {
  const apiRes = await api('GET', '/stock');
  check('Low', 'API answers carry nosniff', apiRes.headers['x-content-type-options'] === 'nosniff');
  for (const page of ['/dashboard/sign-in', '/docs', '/dashboard/forgot-password']) {
    const res = await request('GET', page);
    const csp = String(res.headers['content-security-policy'] ?? '');
    check('Low', `${page} has a CSP with frame-ancestors 'none'`, res.status === 200 && csp.includes("frame-ancestors 'none'"), `${res.status} ${csp}`);
  }
};

sections.money = async () => {
  const user = await newUser('money', 10);
  const product = await newProduct('money', { stock: 5 });
  for (const amount of ['1.999999999999999999', '10.005', '"10"', '-5', '0', '1e400', 'null', '[10]', '{"a":1}', '1e2', '99999999999999999999']) {
    const res = await request('POST', '/api/v2/wallet/deposit', { key: user.key, body: `{"amount":${amount},"gateway":"gateway_one"}`, headers: { 'Content-Type': 'application/json' } });
    const ok = amount === '1e2' ? res.status === 200 || res.status === 201 || res.status === 422 : isError(res, 422, 'VALIDATION_FAILED');
    check('Medium', `deposit amount ${amount} → 422`, ok, brief(res));
  }
  for (const quantity of ['0', '-1', '1.5', '"1"', '1e9', 'true']) {
    const res = await request('POST', '/api/v2/orders', { key: user.key, body: `{"product_id":${product.id},"quantity":${quantity}}`, headers: { 'Content-Type': 'application/json' } });
    check('Medium', `purchase quantity ${quantity} → 422 or 400, never a charge`, res.status === 422 || res.status === 400, brief(res));
  }
  check('Medium', 'the wallet is untouched by the bad inputs', (await balanceOf(user)) === 10);
  const deep = '['.repeat(200) + ']'.repeat(200);
  const nested = await request('POST', '/api/v2/orders', { key: user.key, body: deep, headers: { 'Content-Type': 'application/json' } });
  check('Medium', 'a JSON body nested 200 deep → 422', isError(nested, 422, 'VALIDATION_FAILED'), brief(nested));
};

// The fourth review ("A revoked key buys nothing, a blocked buyer stays blocked").

sections.revoked = async () => {
  // A $1 deposit carrying a $12 order, its key revoked, then paid ("Mark paid"): credited, not bought.
  const user = await newUser('revoked', 11);
  const product = await newProduct('revoked', { price: 12, stock: 2 });
  const key = await newKey(user.key);
  const order = { product_id: product.id, quantity: 1, expected_total: 12 };
  const deposit = await must(await api('POST', '/wallet/deposit', { key: key.key, body: { amount: 1, gateway: 'gateway_one', order } }), 200, 'a deposit with an order');
  await must(await api('DELETE', `/api-keys/${key.id}`, { key: user.key }), 200, 'revoking the key');
  await must(await api('POST', `/admin/deposits/${deposit.deposit_id}/mark-paid`, { admin: true, body: {} }), 200, 'mark paid');
  const status = (await api('GET', `/wallet/deposits/${deposit.deposit_id}/status`, { key: user.key })).json?.data;
  check('Medium', "a revoked key's deposit order is not bought (order_error UNAUTHORIZED)", status?.order_id === null && status?.order_error === 'UNAUTHORIZED', JSON.stringify(status));
  check('Medium', 'the credit stands and the balance is not spent', (await balanceOf(user)) === 12);
};

sections.blocked = async () => {
  const rules = [];
  const addRule = async (type, value) => {
    const res = await api('POST', '/admin/blocklist', { admin: true, body: { type, value } });
    if (res.status === 201) rules.push(res.json.data.id);
    return res;
  };
  const product = await newProduct('blocked', { price: 1, stock: 20 });
  try {
    const user = await newUser('blocked', 5);
    await addRule('email', user.email.toUpperCase());
    const moved = await api('PUT', '/user/profile', { key: user.key, body: { email: `moved-${RUN}-${Math.random().toString(36).slice(2, 8)}@example.com` }, ip: freshIp() });
    check('Medium', 'an email change away from a blocked address → 403 BLOCKED', isError(moved, 403, 'BLOCKED'), brief(moved));
    check('Medium', 'the blocked buyer still cannot buy', isError(await buy(user.key, product.id), 403, 'BLOCKED'));
    const local = `tag${RUN}${Math.random().toString(36).slice(2, 6)}`;
    await addRule('email', `${local}@example.com`);
    const tagged = await api('POST', '/admin/users', { admin: true, body: { name: 'Tagged', email: `${local}+shop@Example.com`, password: `review password ${RUN}` } });
    check('Low', 'an email rule matches a +tag address', isError(await buy(tagged.json?.data?.api_key, product.id), 403, 'BLOCKED'));
    const domain = `wild${RUN}.example`;
    check('Low', '*.domain is a valid email_domain rule', (await addRule('email_domain', `*.${domain}`)).status === 201);
    const sub = await api('POST', '/admin/users', { admin: true, body: { name: 'Sub', email: `a@mail.${domain}`, password: `review password ${RUN}` } });
    check('Low', '*.domain matches a sub-domain', isError(await buy(sub.json?.data?.api_key, product.id), 403, 'BLOCKED'));
    for (const country of ['T1', 'XX']) check('Low', `country ${country} is a valid rule`, (await addRule('country', country)).status === 201);
    for (const value of ['0.0.0.0/0', '10.0.0.0/7', '::/0', '2001::/15']) {
      const res = await api('POST', '/admin/blocklist', { admin: true, body: { type: 'ip', value } });
      check('Low', `an ip rule ${value} → 422 errors.value`, isError(res, 422, 'VALIDATION_FAILED') && Boolean(res.json?.errors?.value), brief(res));
    }
    for (const [name, ch] of Object.entries({ NUL: '\u0000', 'U+202E': '\u202e', 'U+200B': '\u200b' })) {
      const res = await api('POST', '/admin/blocklist', { admin: true, body: { type: 'email', value: `a${ch}b@example.com` } });
      check('Low', `an email rule with ${name} → 422`, isError(res, 422, 'VALIDATION_FAILED'), brief(res));
    }
    const buyer = await newUser('unreadable', 5);
    await addRule('ip', '203.0.113.0/24');
    for (const ip of ['198.051.100.007', '[2001:db8::1]', 'fe80::1%eth0', '192.0.2.1, 192.0.2.2', '3221225985']) {
      const res = await api('POST', '/orders', { key: buyer.key, body: { product_id: product.id, quantity: 1 }, ip });
      check('Low', `while an ip rule exists, client address ${JSON.stringify(ip)} → 403 BLOCKED`, isError(res, 403, 'BLOCKED'), brief(res));
    }
    check('Low', 'a readable address outside the rule buys', (await buy(buyer.key, product.id)).status === 201 || (await api('POST', '/orders', { key: buyer.key, body: { product_id: product.id, quantity: 1 }, ip: freshIp() })).status === 201);
  } finally {
    for (const id of rules) await api('DELETE', `/admin/blocklist/${id}`, { admin: true });
  }
};

sections.invisible = async () => {
  const user = await newUser('invisible');
  for (const [name, text] of Object.entries({ 'U+200B only': '\u200b', 'U+2028 inside': 'Ada\u2028Lovelace', 'U+FEFF inside': 'Ada\ufeff', 'U+2060 inside': 'Ada\u2060L' })) {
    const res = await api('PUT', '/user/profile', { key: user.key, body: { name: text } });
    check('Low', `a name with ${name} → 422`, isError(res, 422, 'VALIDATION_FAILED') && Boolean(res.json?.errors?.name), brief(res));
  }
};

sections.sandbox = async () => {
  const user = await newUser('sandbox');
  const victim = await newUser('victim');
  const test = await newKey(user.key, { mode: 'test' });
  if (test.res.status !== 201) return check('Info', 'test mode is on (SANDBOX_DB bound)', false, brief(test.res));
  const res = await api('PUT', '/user/profile', { key: test.key, body: { email: victim.email } });
  check('Low', 'a test key changing the email → 422 errors.email', isError(res, 422, 'VALIDATION_FAILED') && Boolean(res.json?.errors?.email), brief(res));
  check('Low', "the victim's first test key is made", (await newKey(victim.key, { mode: 'test' })).res.status === 201);
  const deposit = (await api('POST', '/wallet/deposit', { key: test.key, body: { amount: 5, gateway: 'gateway_one' } })).json?.data;
  check('Info', 'a test payment_url is /test/pay/<token>', /\/test\/pay\/[0-9A-Za-z]{32}$/.test(deposit?.payment_url ?? ''), deposit?.payment_url);
  check('Info', 'a deposit id alone opens no test payment page', (await request('GET', `/test/pay/${deposit?.deposit_id}`)).status === 404);
  const anonymous = await request('POST', '/dashboard/console/products', { headers: { Origin: ORIGIN }, body: new URLSearchParams({ name: 'x' }) });
  check('Low', 'an anonymous console post is sent to sign in (and refreshes nothing)', anonymous.status === 303 && /sign-in/.test(String(anonymous.headers.location)), brief(anonymous));
};

sections.console = async ({ operator }) => {
  const buyer = await newUser('console', 5);
  for (const [path, form] of [
    [`/dashboard/console/users/${buyer.id}/balance`, { amount: '1', description: 'review' }],
  ]) {
    const res = await request('POST', path, { cookie: operator, headers: { Origin: ORIGIN }, body: new URLSearchParams(form), ip: freshIp() });
    check('Info', `a console money form without idempotency_key → 422 (${path})`, res.status === 422, `${res.status}`);
  }
  const product = await newProduct('console', { price: 1, stock: 2 });
  const order = (await buy(buyer.key, product.id)).json?.data;
  const refund = await request('POST', `/dashboard/console/orders/${order?.id}/refund`, { cookie: operator, headers: { Origin: ORIGIN }, body: new URLSearchParams({ amount: '0.5', reason: 'review' }), ip: freshIp() });
  check('Info', 'a console refund without idempotency_key → 422', refund.status === 422, `${refund.status}`);
  check('Info', 'nothing moved', (await balanceOf(buyer)) === 4);
};

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  console.log(`Security review against ${ORIGIN} (run ${RUN}), ${new Date().toISOString()}`);
  const root = await api('GET', '');
  if (root.status !== 200) throw new Error(`${ORIGIN}/api/v2 answered ${root.status}: is npm run dev running?`);
  const docRes = await api('GET', '/openapi.json');
  if (docRes.status !== 200) throw new Error(`the OpenAPI document: ${brief(docRes)}`);
  const operator = await signIn(DEMO_OPERATOR.email, DEMO_OPERATOR.password);
  const adminCheck = await api('GET', '/admin/users?per_page=1', { admin: true });
  if (adminCheck.status !== 200) throw new Error(`the admin token was refused (${adminCheck.status}): pass --admin-token`);
  const ctx = { doc: docRes.json, operator };
  for (const [name, run] of Object.entries(sections)) {
    if (ONLY.length > 0 && !ONLY.includes(name)) continue;
    section = name;
    try {
      await run(ctx);
    } catch (err) {
      check('High', `the section ran to its end (${err instanceof Error ? err.message : err})`, false);
    }
  }
  const failed = results.filter((r) => !r.ok);
  const bySeverity = (list) => Object.entries(list.reduce((acc, r) => ({ ...acc, [r.severity]: (acc[r.severity] ?? 0) + 1 }), {})).map(([s, n]) => `${s} ${n}`).join(', ');
  console.log('');
  console.log(`Summary: ${results.length} checks, ${results.length - failed.length} PASS, ${failed.length} FAIL${failed.length ? ` (${bySeverity(failed)})` : ''}`);
  for (const name of Object.keys(sections)) {
    const mine = results.filter((r) => r.section === name);
    if (mine.length) console.log(`  ${name.padEnd(8)} ${mine.length} checks, ${mine.filter((r) => !r.ok).length} FAIL`);
  }
  agent.destroy();
  process.exit(failed.length > 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  agent.destroy();
  process.exit(2);
});
