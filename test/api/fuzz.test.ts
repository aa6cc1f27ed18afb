import { env } from 'cloudflare:test';
import { sql } from 'drizzle-orm';
import { SELF } from '../contract';
import fc from 'fast-check';
import { runBatch } from '../../src/db/batch';
import { insertSession, newSessionToken } from '../../src/services/accounts/sessions';
import { liveSession } from '../dashboard-helpers';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, BASE, buy, call, hmacSha256Hex, newDeposit, newProduct, newUser, WEBHOOK_SECRETS, type TestUser } from '../helpers';
import { seedFor, testSettings } from '../seed';
import { changedTables, snapshot, type Snapshot } from '../snapshot';

// Property-based fuzzing of every route the OpenAPI document lists (plus the undocumented ones: service info, the
// OpenAPI document itself, the development checkout page, unknown routes), the dashboard's pages and forms included
// (with a session cookie, urlencoded bodies, same-site or hostile origins; their refusals are HTML pages, checked for
// leaks instead of the JSON envelope). Each request is built from hostile parts:
// JSON bodies shaped like the route's real body but with wrong types, huge / negative-zero / unsafe numbers, unicode,
// NUL, RTL and very long strings, nested arrays, missing and extra fields; arbitrary JSON values; malformed JSON text;
// assorted content types (or none) and transports (fixed length, streamed); junk, repeated, empty and badly
// percent-encoded query strings; hostile path ids; valid and broken credentials / webhook signatures.
//
// Properties, for every request:
//   - never a 5xx;
//   - every 4xx is the contract error envelope {success:false, error, code, errors?} with a code of the contract's
//     table and that code's status, without stack traces or SQL;
//   - a 4xx changes nothing: every business table is snapshotted after each request and compared with the previous
//     snapshot whenever the request failed (api_keys.last_used_at is excluded: authenticating a request may refresh
//     it after the response, whatever the outcome).
// Whether the API and its document agree on which requests are valid is test/api/contract-fuzz.test.ts's property:
// it generates requests from the document's schemas and judges them with Ajv.
//
// The seed is pinned (test/seed.ts) and printed; another set of requests: SEED=<n> npx vitest run test/api/fuzz.test.ts.
// VITE_FUZZ_SCALE=<factor> multiplies the number of runs per route (default 1: the file stays well under a minute).

const SEED = seedFor('fuzz.test.ts', 20_261_124);
const SCALE = Number(testSettings.VITE_FUZZ_SCALE) > 0 ? Number(testSettings.VITE_FUZZ_SCALE) : 1;
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));

// ---------------------------------------------------------------------------------------------------------------
// The contract
// ---------------------------------------------------------------------------------------------------------------

/** The error table of the contract (INTERNAL_ERROR left out on purpose: a 500 is a failure here). */
const CONTRACT_ERRORS: Record<string, number> = {
  UNAUTHORIZED: 401,
  // the checkout page's form posts from another origin ("403 from another origin"; the contract names no code)
  FORBIDDEN: 403,
  API_KEY_LIMIT_REACHED: 400,
  // a test-mode route (/test/...) with a live key
  TEST_KEY_REQUIRED: 403,
  NOT_FOUND: 404,
  // a known path called with a method it does not serve (with Allow)
  METHOD_NOT_ALLOWED: 405,
  VALIDATION_FAILED: 422,
  INSUFFICIENT_BALANCE: 400,
  INSUFFICIENT_STOCK: 400,
  INVALID_PACK_SIZE: 400,
  PRODUCT_UNAVAILABLE: 400,
  ORDER_NOT_CANCELLABLE: 400,
  CANCEL_LIMIT_REACHED: 400,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  PAYLOAD_TOO_LARGE: 413,
  // referrals: less available than the shop's minimum transfer
  TRANSFER_TOO_SMALL: 400,
};
/** The webhook section says "paid with a different amount than the deposit → 400" without naming a code. */
const WEBHOOK_ONLY_ERRORS: Record<string, number> = { AMOUNT_MISMATCH: 400 };
const ENVELOPE_KEYS = new Set(['success', 'error', 'code', 'errors']);
const LEAK = /\bat \S+ \(|\.[tj]s:\d+|node_modules|SQLITE_|D1_ERROR|Failed query|\bstack\b/i;

// ---------------------------------------------------------------------------------------------------------------
// Routes, from the OpenAPI document
// ---------------------------------------------------------------------------------------------------------------

type Auth = 'apiKey' | 'admin' | 'webhook' | 'public' | 'session';

interface Operation {
  method: string;
  /** Absolute path template, `{name}` for path parameters. */
  template: string;
  pathParams: string[];
  queryParams: string[];
  headerParams: string[];
  bodyFields: string[];
  auth: Auth;
  documented: boolean;
}

interface OpenApiSchema {
  $ref?: string;
  properties?: Record<string, unknown>;
}
interface OpenApiOperation {
  security?: Array<Record<string, unknown>>;
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content?: Record<string, { schema?: OpenApiSchema }> };
}
interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, OpenApiSchema> };
}

const openApi = (await (await SELF.fetch(`${BASE}/openapi.json`)).json()) as OpenApiDoc;

function resolveSchema(schema: OpenApiSchema | undefined): OpenApiSchema | undefined {
  if (!schema?.$ref) return schema;
  return openApi.components?.schemas?.[schema.$ref.split('/').pop()!];
}

function authOf(op: OpenApiOperation): Auth {
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (schemes.includes('AdminBearer')) return 'admin';
  if (schemes.includes('WebhookSignature')) return 'webhook';
  if (schemes.includes('ApiKeyHeader') || schemes.includes('ApiKeyQuery')) return 'apiKey';
  return 'public';
}

const isDashboardPath = (path: string) => /^\/dashboard(\/|$)/.test(path);
const isPagePath = (path: string) => isDashboardPath(path) || /^\/embed\//.test(path) || /^\/shop\/./.test(path);

const DOCUMENTED: Operation[] = Object.entries(openApi.paths).flatMap(([template, methods]) =>
  Object.entries(methods).map(([method, op]) => ({
    method: method.toUpperCase(),
    template,
    pathParams: [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
    queryParams: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    headerParams: (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name),
    bodyFields: Object.values(op.requestBody?.content ?? {}).flatMap((c) => Object.keys(resolveSchema(c.schema)?.properties ?? {})),
    // The dashboard's pages: a session cookie, form bodies, HTML refusals.
    auth: isDashboardPath(template) ? 'session' : authOf(op),
    documented: true,
  })),
);

const undocumented = (method: string, template: string): Operation => ({
  method,
  template,
  pathParams: [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
  queryParams: [],
  headerParams: [],
  bodyFields: [],
  auth: 'public',
  documented: false,
});

/** Routes outside the document (each fuzzed only while the document does not list it). */
const EXTRA_ROUTES: Array<[method: string, template: string]> = [
  ['GET', '/'],
  ['GET', '/api/v2'],
  ['GET', '/api/v2/openapi.json'],
  // The development checkout page (DEV_CHECKOUT, on in .dev.vars): unauthenticated, 404 when switched off.
  ['GET', '/pay/{id}'],
  ['POST', '/pay/{id}/{outcome}'],
];

const OPERATIONS: Operation[] = [
  ...DOCUMENTED,
  ...EXTRA_ROUTES.filter(([method, template]) => !DOCUMENTED.some((op) => op.method === method && op.template === template)).map(([method, template]) =>
    undocumented(method, template),
  ),
];

// ---------------------------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------------------------

/** A JSON number written as raw text (values JSON.stringify cannot produce: 2**53+1, 1e309, -0, 1E2, ...). */
class RawJson {
  constructor(readonly text: string) {}
  toJSON() {
    return `RAW(${this.text})`;
  }
}

function toJsonText(value: unknown): string | undefined {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => toJsonText(v) ?? 'null').join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => [k, toJsonText(v)] as const)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${v}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : [nested(depth - 1, leaf)]);

const HOSTILE_STRINGS = [
  '',
  ' ',
  '   padded   ',
  '\u0000',
  'a\u0000b',
  "'; DROP TABLE users; --",
  '" OR 1=1 --',
  '%',
  '_',
  '\\',
  '%00',
  '\u202Egnp.exe',
  '\u200B',
  '\uFEFF1',
  '🙂',
  '👨‍👩‍👧‍👦',
  'NaN',
  'Infinity',
  '-0',
  '1e3',
  '3',
  '1.5',
  '0x10',
  'null',
  'true',
  '[]',
  '{}',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '\r\n',
  '١٢٣',
  '１',
  '\uD800',
  'x'.repeat(5000),
  'é'.repeat(300),
  'gateway_one',
  'USDT',
  'paid',
  'a@b.co',
  'sk_live_' + 'A'.repeat(40),
];

const HOSTILE_NUMBERS = [0, -0, 1, -1, 2, 1e308, -1e308, 5e-324, 2 ** 53, -(2 ** 53), 2 ** 31, 1.5, 0.001, 0.1 + 0.2, 1e21, 10000.001, 999_999_999_999_999, 1e-7, 100_000_000.01];

const RAW_NUMBERS = ['9007199254740993', '-9007199254740993', '1e309', '-1e309', '-0', '1E2', '1.0', '0.1e1', '1e-400', '100000000000000000000000', '1.00000000000000000001', '-0.0'];

const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 3 }), fc.integer({ min: 50, max: 20_000 })).map(([s, n]) => s.repeat(n)) },
);

const hostileNumber = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((t) => new RawJson(t)) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 1500 }) },
  { weight: 2, arbitrary: fc.double() },
);

const hostileLeaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: hostileLeaf },
  { weight: 1, arbitrary: fc.array(hostileLeaf, { maxLength: 6 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), hostileLeaf, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(nested(64, 1), nested(512, 'x'), [[[]]], { '': {} }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Bodies that are not valid JSON, or valid JSON of an odd shape. */
const MALFORMED_JSON = [
  '',
  ' ',
  '{',
  '}',
  '{"a":',
  '[1,2',
  '{"name": "x",}',
  "{'name': 'x'}",
  '{name: "x"}',
  'NaN',
  'undefined',
  '\u0000',
  '{"a":1}{"b":2}',
  '{"a":1} trailing',
  'null',
  'true',
  '0',
  '"a string"',
  '[]',
  '1e999',
  '{"__proto__": {"admin": true}, "name": "x"}',
  '{"constructor": {"prototype": {"polluted": 1}}}',
  '{"quantity": 1, "quantity": "1", "product_id": 1, "product_id": -1}',
  '{"amount": 10, "amount": 1e309, "gateway": "gateway_one"}',
  '\uFEFF{"name": "bom"}',
  '{"name": "\\ud800"}',
  '{"name": "\\u0000"}',
  '{"name": "x"}\u0000',
  '['.repeat(5000) + ']'.repeat(5000),
  '{"a":'.repeat(2000) + '1' + '}'.repeat(2000),
  `{"name": "${'x'.repeat(100_000)}"}`,
];

const CONTENT_TYPES: Array<string | null> = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json;charset=UTF-8',
  'application/json; charset=latin1',
  'text/plain',
  'text/plain; charset=utf-8',
  'multipart/form-data; boundary=fuzz',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'application/vnd.api+json',
  '',
  null, // no Content-Type header at all
];

const HOSTILE_IDS = [
  '0',
  '-1',
  '1e3',
  '9'.repeat(40),
  '%00',
  '%',
  '%2F',
  '%2e%2e',
  '1.0',
  '+1',
  '0x1F',
  '01',
  '1%20',
  '%20',
  '%E0%A4%A',
  encodeURIComponent('١'),
  encodeURIComponent('１'),
  encodeURIComponent('🙂'),
  encodeURIComponent('\u202E1'),
  'null',
  'undefined',
  '__proto__',
  encodeURIComponent("1' OR 1=1 --"),
  '999999999999999',
  '9999999999999999',
  '9007199254740993',
  '1;DROP',
  '',
];

const GATEWAY_PARAMS = ['gateway_one', 'gateway_two', 'gateway_three', 'crypto', 'GATEWAY_ONE', 'gateway_four', '__proto__', 'constructor', 'toString', '%00', ''];

/** encodeURIComponent that survives lone surrogates: those become their (invalid) WTF-8 percent-encoding. */
function percentEncode(value: string): string {
  let out = '';
  for (const ch of value) {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

const safeDecode = (value: string) => {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
};

/** Header values fetch accepts (printable ASCII and tab), so the request itself can always be built. */
const headerSafe = (s: string) => s.replace(/[^\t\x20-\x7e]/g, '');

// ---------------------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------------------

interface RequestSpec {
  method: string;
  /** Path with parameters substituted (already URL-encoded as intended). */
  path: string;
  /** Query segments, joined with '&' as they are (some deliberately malformed). */
  query: string[];
  auth: string;
  /** For auth 'sig:malformed' and 'junk' variants. */
  authJunk: string;
  contentType: string | null;
  body: string | undefined;
  transport: 'text' | 'bytes' | 'stream';
  idempotencyKey: string | undefined;
  requestId: string | undefined;
  /** X-D1-Bookmark (read-replica session constraint) and CF-Connecting-IP (public rate-limit key). */
  bookmark?: string;
  clientIp?: string;
  /** Dashboard form posts: where the browser says the form came from. */
  origin?: 'same' | 'evil' | 'none' | 'fetch-site';
}

interface Ctx {
  a: TestUser;
  b: TestUser;
  aKeyId: number;
  ids: { order: number[]; deposit: number[]; key: number[]; user: number[]; product: number[] };
  depositAmounts: number[];
  /** Dashboard session tokens of users a and b (reopened when a password change or sign-out ended them). */
  sessions: { a: string; b: string };
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PURGE', 'PROPFIND'];
const BODYLESS = new Set(['GET', 'HEAD']);

function pathIdPool(ctx: Ctx, template: string, param: string): string[] {
  if (param === 'gateway') return ['gateway_one', 'gateway_two', 'gateway_three'];
  if (param === 'outcome') return ['pay', 'fail'];
  if (param === 'product_id' || template.includes('/products/')) return ctx.ids.product.map(String);
  if (template.includes('/orders/')) return ctx.ids.order.map(String);
  if (template.includes('/deposits/') || template.startsWith('/pay/')) return ctx.ids.deposit.map(String);
  if (template.includes('/api-keys/') || template.startsWith('/dashboard/keys/')) return ctx.ids.key.map(String);
  if (template.includes('/users/')) return ctx.ids.user.map(String);
  return ['1'];
}

function pathParamArb(ctx: Ctx, op: Operation, param: string): fc.Arbitrary<string> {
  const pool = pathIdPool(ctx, op.template, param);
  if (param === 'gateway' || param === 'outcome') {
    const junk = param === 'gateway' ? GATEWAY_PARAMS : ['PAY', 'refund', 'pay%00', ''];
    return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: fc.constantFrom(...junk) }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_IDS) });
  }
  const arb = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...pool) },
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_IDS) },
    { weight: 1, arbitrary: fc.nat().map(String) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).map(percentEncode) },
  );
  // Never revoke the key the fuzzer authenticates with (a decoded alias such as %31 included).
  if (op.template.includes('/api-keys/') || op.template.startsWith('/dashboard/keys/')) {
    return arb.filter((raw) => safeDecode(raw) !== String(ctx.aKeyId));
  }
  return arb;
}

function queryValueArb(ctx: Ctx, name: string): fc.Arbitrary<string> {
  const known: Record<string, fc.Arbitrary<string>> = {
    page: fc.constantFrom('1', '2', '0', '-1', '1e3', '1.0', ' 1', '999999999', '1000000000', '9'.repeat(40), '', 'abc', '%31'),
    per_page: fc.constantFrom('1', '20', '100', '101', '0', '-5', '1.5', '', '9'.repeat(40)),
    ids: fc.oneof(
      fc.constantFrom('1,2,3', '1,1', ',', '1,,2', '0', '-1', '1e3', '9'.repeat(40), ' 1 , 2 ', '1;2', ctx.ids.product.join(',')),
      fc.array(fc.integer({ min: 1, max: 2 ** 40 }), { minLength: 1, maxLength: 60 }).map((ids) => ids.join(',')),
    ),
    format: fc.constantFrom('txt', 'TXT', 'pdf', '', 'txt\u0000', 'csv', '../txt'),
  };
  return fc.oneof({ weight: 3, arbitrary: known[name] ?? hostileString }, { weight: 2, arbitrary: hostileString });
}

/** Plausible values of the route's own query parameters, each present or not. */
function ownQueryArb(ctx: Ctx, op: Operation): fc.Arbitrary<string[]> {
  const plausible: Record<string, fc.Arbitrary<string>> = {
    page: fc.constantFrom('1', '2'),
    per_page: fc.constantFrom('1', '20', '100'),
    ids: fc.constantFrom(ctx.ids.product.join(','), String(ctx.ids.product[0]), '1,2,3'),
    format: fc.constant('txt'),
  };
  const own = op.queryParams.map((name) =>
    fc.option(fc.oneof(plausible[name] ?? hostileString, queryValueArb(ctx, name)).map((v) => `${name}=${percentEncode(v)}`), { freq: 4, nil: undefined }),
  );
  return fc.tuple(...own).map((segments) => segments.filter((s): s is string => s !== undefined));
}

function queryArb(ctx: Ctx, op: Operation): fc.Arbitrary<string[]> {
  const names = [...op.queryParams, 'page', 'per_page', 'x', 'api_key'];
  const pair = fc.constantFrom(...names).chain((name) =>
    fc.tuple(fc.constant(name), queryValueArb(ctx, name), fc.constantFrom('encoded', 'raw', 'bare', 'empty')),
  );
  const segment = fc.oneof(
    {
      weight: 5,
      arbitrary: pair.map(([k, v, mode]) =>
        mode === 'encoded' ? `${percentEncode(k)}=${percentEncode(v)}` : mode === 'raw' ? `${k}=${v}` : mode === 'bare' ? k : `${k}=`,
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '=', '&', '=1', '%00=%00', 'a[]=1', 'a[b]=2', '__proto__=1', 'constructor=x', '+', '%2B') },
  );
  return fc
    .tuple(ownQueryArb(ctx, op), fc.array(segment, { maxLength: 4 }), fc.boolean())
    .map(([own, junk, junkFirst]) => (junkFirst ? [...junk, ...own] : [...own, ...junk]));
}

function validFieldArb(ctx: Ctx, field: string): fc.Arbitrary<unknown> | undefined {
  const valid: Record<string, fc.Arbitrary<unknown>> = {
    name: fc.constantFrom('Fuzz Name', 'Ωmega 🙂', 'x'),
    email: fc.oneof(fc.uuid().map((u) => `fuzz-${u}@example.com`), fc.constant(ctx.b.email)),
    password: fc.constantFrom('password123', 'correct horse battery'),
    current_password: fc.constantFrom('correct horse battery', 'wrong password'),
    new_password: fc.constant('new password 1'),
    new_password_confirmation: fc.constantFrom('new password 1', 'other password'),
    password_confirmation: fc.constantFrom('password123', 'correct horse battery'),
    idempotency_key: fc.constantFrom('fuzz-form-1', 'fuzz-form-2', ''),
    product_id: fc.oneof({ weight: 3, arbitrary: fc.constant(ctx.ids.product[0]) }, { weight: 2, arbitrary: fc.constantFrom(...ctx.ids.product) }),
    quantity: fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 2, arbitrary: fc.constantFrom(2, 5, 10, 1000) }),
    amount: fc.constantFrom(...ctx.depositAmounts, 1, 10, 10_000, 0.01, -1, 12.34),
    gateway: fc.constantFrom('gateway_one', 'crypto', 'gateway_two', 'gateway_three'),
    crypto_currency: fc.constantFrom('USDT', 'BTC', 'ETH'),
    description: fc.constant('fuzz adjustment'),
    sku: fc.uuid().map((u) => `FUZZ-${u}`),
    category: fc.constantFrom('fuzz', null),
    price: fc.constantFrom(0.01, 1.5, 1_000_000),
    allowed_quantities: fc.constantFrom([1, 5], null, [1000]),
    active: fc.boolean(),
    items: fc.array(fc.string({ maxLength: 20 }), { maxLength: 5 }),
    deposit_id: fc.constantFrom(...ctx.ids.deposit),
    status: fc.constantFrom('paid', 'failed', 'expired'),
    transaction_id: fc.uuid().map((u) => `tx_${u}`),
  };
  return valid[field];
}

/** An object with the route's own field names: each plausible, hostile or missing; plus unknown extra fields. */
function fieldsObjectArb(ctx: Ctx, fields: string[]): fc.Arbitrary<Record<string, unknown>> {
  const model = Object.fromEntries(
    fields.map((field) => {
      const valid = validFieldArb(ctx, field);
      return [field, valid ? fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: hostileValue }) : hostileValue];
    }),
  );
  const extra = fc.dictionary(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('id', 'user_id', 'balance', 'admin', 'role', '__proto__')), hostileValue, {
    maxKeys: 3,
  });
  return fc
    .tuple(fc.record(model, { requiredKeys: [] }), fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extra }))
    .map(([known, more]) => ({ ...more, ...known }));
}

/** A fully valid body with at most one field broken (set to a hostile value, or removed): reaches the deep code. */
function oneMutationArb(ctx: Ctx, fields: string[]): fc.Arbitrary<Record<string, unknown>> {
  const validFields = fields.filter((f) => validFieldArb(ctx, f) !== undefined);
  if (validFields.length === 0) return fc.constant({});
  const valid = fc.record(Object.fromEntries(validFields.map((f) => [f, validFieldArb(ctx, f)!])));
  return fc
    .tuple(valid, fc.constantFrom(...validFields), fc.option(hostileValue, { freq: 3 }), fc.constantFrom('mutate', 'delete', 'keep'))
    .map(([body, field, value, how]) => {
      const copy: Record<string, unknown> = { ...body };
      if (how === 'delete') delete copy[field];
      else if (how === 'mutate' && value !== null) copy[field] = value;
      return copy;
    });
}

/** Fields as a urlencoded form, as a browser posts them (objects and arrays as their JSON text). */
const formText = (fields: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? v : (toJsonText(v) ?? '')])).toString();

function bodyArb(ctx: Ctx, op: Operation): fc.Arbitrary<string | undefined> {
  const fields = op.bodyFields.length > 0 ? op.bodyFields : ['id', 'name', 'amount'];
  if (op.auth === 'session') {
    return fc.oneof(
      { weight: 5, arbitrary: fieldsObjectArb(ctx, fields).map(formText) },
      { weight: 8, arbitrary: oneMutationArb(ctx, fields).map(formText) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
      { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_JSON, '%', 'a=%zz&b', '&&&=', 'name=%E0%A4%A', '--fuzz\r\nContent-Disposition: form-data; name="a"\r\n\r\n') },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constant(`name=${'x'.repeat(1024 * 1024)}`) },
    );
  }
  return fc.oneof(
    { weight: 5, arbitrary: fieldsObjectArb(ctx, fields).map((v) => toJsonText(v)) },
    { weight: 8, arbitrary: oneMutationArb(ctx, fields).map((v) => toJsonText(v)) },
    { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.anything().map((v) => toJsonText(v)) },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_JSON) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 30 }), { maxLength: 8 }).map((lines) => lines.join('\n')) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    // just over the 1 MB default limit (the stock upload route allows 16 MB)
    { weight: 1, arbitrary: fc.constant(`{"name": "${'x'.repeat(1024 * 1024)}"}`) },
  );
}

function authArb(op: Operation): fc.Arbitrary<string> {
  switch (op.auth) {
    case 'apiKey':
      return fc.oneof(
        { weight: 10, arbitrary: fc.constant('key:header') },
        { weight: 3, arbitrary: fc.constant('key:query') },
        { weight: 1, arbitrary: fc.constantFrom('key:both', 'key:other-user', 'key:junk-header', 'key:junk-query', 'none') },
      );
    case 'admin':
      return fc.oneof({ weight: 10, arbitrary: fc.constant('admin:bearer') }, { weight: 1, arbitrary: fc.constantFrom('admin:junk', 'admin:user-key', 'none') });
    case 'webhook':
      return fc.oneof(
        { weight: 8, arbitrary: fc.constant('sig:valid') },
        { weight: 1, arbitrary: fc.constant('sig:valid-upper') },
        { weight: 1, arbitrary: fc.constantFrom('sig:wrong-secret', 'sig:stale', 'sig:future', 'sig:flipped', 'sig:malformed', 'none') },
      );
    case 'session':
      return fc.oneof(
        { weight: 10, arbitrary: fc.constant('session') },
        { weight: 1, arbitrary: fc.constantFrom('session:other-user', 'session:junk', 'key:header', 'none') },
      );
    default:
      return fc.oneof({ weight: 5, arbitrary: fc.constant('none') }, { weight: 1, arbitrary: fc.constantFrom('key:header', 'key:junk-header', 'admin:bearer') });
  }
}

function requestArb(ctx: Ctx, op: Operation): fc.Arbitrary<RequestSpec> {
  const path = fc
    .tuple(...op.pathParams.map((p) => pathParamArb(ctx, op, p)))
    .map((values) => op.pathParams.reduce((template, name, i) => template.replace(`{${name}}`, values[i]), op.template));
  const idempotencyKey = op.headerParams.includes('Idempotency-Key')
    ? fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        // a small pool, so keys get reused with other requests (IDEMPOTENCY_KEY_REUSED)
        { weight: 2, arbitrary: fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3') },
        { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 300 }).map(headerSafe) },
        { weight: 1, arbitrary: fc.constantFrom('', ' ', 'k'.repeat(256), 'k'.repeat(255), 'tab\there') },
      )
    : fc.constant(undefined);
  return fc.record({
    method: fc.oneof({ weight: 12, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    path,
    query: fc.oneof({ weight: 1, arbitrary: ownQueryArb(ctx, op) }, { weight: 2, arbitrary: queryArb(ctx, op) }),
    auth: authArb(op),
    authJunk: fc.oneof(fc.constantFrom('t=abc,v1=zz', 'v1=', ',,,', 't=1', 'Bearer', 'sk_live_', ''), fc.string({ unit: 'binary-ascii', maxLength: 80 }).map(headerSafe)),
    contentType: fc.oneof(
      { weight: 6, arbitrary: fc.constant<string | null>(op.auth === 'session' ? 'application/x-www-form-urlencoded' : 'application/json') },
      { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    ),
    body: bodyArb(ctx, op),
    transport: fc.constantFrom<RequestSpec['transport']>('text', 'text', 'bytes', 'stream'),
    idempotencyKey,
    requestId: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 140 }).map(headerSafe) }),
    bookmark: bookmarkArb,
    origin:
      op.auth === 'session'
        ? fc.oneof({ weight: 8, arbitrary: fc.constant<RequestSpec['origin']>('same') }, { weight: 1, arbitrary: fc.constantFrom<RequestSpec['origin']>('evil', 'none', 'fetch-site') })
        : fc.constant(undefined),
    // Mostly a fresh client address per request, so the public per-IP rate limit does not hide the routes behind 429s.
    clientIp: fc.oneof({ weight: 6, arbitrary: fc.ipV4() }, { weight: 1, arbitrary: fc.ipV6() }, { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 60 }).map(headerSafe) }),
  });
}

const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });
/** Bookmarks: none, junk, well-formed but never issued (random hex in the right shape), or one the service handed out. */
const bookmarkArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 80 }).map(headerSafe) },
  { weight: 2, arbitrary: fc.tuple(hex(8), hex(8), hex(8), hex(32)).map((parts) => parts.join('-')) },
  { weight: 1, arbitrary: fc.constantFrom('00000000-00000000-00000000-00000000000000000000000000000000', 'ffffffff-ffffffff-ffffffff-ffffffffffffffffffffffffffffffff') },
  { weight: 1, arbitrary: fc.constant('issued') }, // replaced by the last bookmark a response carried
);

async function signature(gatewayPath: string, mode: string, body: string, junk: string): Promise<string | undefined> {
  const gateway = safeDecode(gatewayPath.split('/').pop() ?? '');
  const secret = WEBHOOK_SECRETS[gateway] ?? WEBHOOK_SECRETS.gateway_one;
  const now = Math.floor(Date.now() / 1000);
  const sign = async (t: number, key = secret) => `t=${t},v1=${await hmacSha256Hex(key, `${t}.${body}`)}`;
  switch (mode) {
    case 'sig:valid':
      return sign(now);
    case 'sig:valid-upper':
      return (await sign(now)).replace(/v1=([0-9a-f]+)/, (_, hex: string) => `v1=${hex.toUpperCase()}`);
    case 'sig:wrong-secret':
      return sign(now, 'not-the-secret');
    case 'sig:stale':
      return sign(now - 301);
    case 'sig:future':
      return sign(now + 10_000);
    case 'sig:flipped':
      return (await sign(now)).replace(/.$/, (c) => (c === '0' ? '1' : '0'));
    case 'sig:malformed':
      return junk;
    default:
      return undefined;
  }
}

let lastBookmark: string | undefined;

interface Sent {
  status: number;
  headers: Headers;
  text: string;
  url: string;
}

async function send(ctx: Ctx, spec: RequestSpec): Promise<Sent> {
  const headers = new Headers();
  const query = [...spec.query];
  switch (spec.auth) {
    case 'key:header':
      headers.set('X-API-Key', ctx.a.key);
      break;
    case 'key:query':
      query.push(`api_key=${encodeURIComponent(ctx.a.key)}`);
      break;
    case 'key:both':
      headers.set('X-API-Key', ctx.a.key);
      query.push(`api_key=${encodeURIComponent(ctx.b.key)}`);
      break;
    case 'key:other-user':
      headers.set('X-API-Key', ctx.b.key);
      break;
    case 'key:junk-header':
      headers.set('X-API-Key', spec.authJunk);
      break;
    case 'key:junk-query':
      query.push(`api_key=${percentEncode(spec.authJunk)}`);
      break;
    case 'admin:bearer':
      headers.set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      break;
    case 'admin:junk':
      headers.set('Authorization', spec.authJunk);
      break;
    case 'admin:user-key':
      headers.set('Authorization', `Bearer ${ctx.a.key}`);
      break;
    case 'session':
      headers.set('Cookie', `dashboard_session=${ctx.sessions.a}`);
      break;
    case 'session:other-user':
      headers.set('Cookie', `dashboard_session=${ctx.sessions.b}`);
      break;
    case 'session:junk':
      headers.set('Cookie', `dashboard_session=${spec.authJunk}`);
      break;
  }
  if (spec.origin === 'same') headers.set('Origin', 'http://localhost');
  if (spec.origin === 'evil') headers.set('Origin', 'https://evil.example');
  if (spec.origin === 'fetch-site') headers.set('Sec-Fetch-Site', 'same-origin');
  const hasBody = !BODYLESS.has(spec.method) && spec.body !== undefined;
  if (spec.auth.startsWith('sig:')) {
    const value = await signature(spec.path, spec.auth, hasBody ? spec.body! : '', spec.authJunk);
    if (value !== undefined) headers.set('X-Signature', value);
  }
  if (spec.contentType !== null) headers.set('Content-Type', spec.contentType);
  if (spec.idempotencyKey !== undefined) headers.set('Idempotency-Key', spec.idempotencyKey);
  if (spec.requestId !== undefined) headers.set('X-Request-Id', spec.requestId);
  if (spec.bookmark !== undefined) headers.set('X-D1-Bookmark', spec.bookmark === 'issued' ? (lastBookmark ?? spec.bookmark) : spec.bookmark);
  if (spec.clientIp !== undefined) headers.set('CF-Connecting-IP', spec.clientIp);

  const init: RequestInit & { duplex?: 'half' } = { method: spec.method, headers };
  if (hasBody) {
    const bytes = new TextEncoder().encode(spec.body);
    // A string body would make fetch add `text/plain;charset=UTF-8`: bytes keep "no Content-Type" honest.
    if (spec.transport === 'text' && spec.contentType !== null) init.body = spec.body;
    else if (spec.transport === 'stream') {
      const half = Math.floor(bytes.length / 2);
      init.body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, half));
          controller.enqueue(bytes.slice(half));
          controller.close();
        },
      });
      init.duplex = 'half';
    } else init.body = bytes;
  }
  const url = `http://localhost${spec.path}${query.length > 0 ? `?${query.join('&')}` : ''}`;
  const res = await SELF.fetch(url, { ...init, redirect: 'manual' });
  lastBookmark = res.headers.get('X-D1-Bookmark') ?? lastBookmark;
  return { status: res.status, headers: res.headers, text: await res.text(), url };
}

/** The response properties; returns a description of the violation, or null. */
function violation(op: Operation, spec: RequestSpec, res: Sent): string | null {
  if (res.status >= 500) return `5xx: ${res.status} ${res.text.slice(0, 500)}`;
  if (!res.headers.get('X-Request-Id')) return 'no X-Request-Id header';
  if (res.status < 400) {
    // Success bodies of documented JSON routes are the success envelope.
    // (The OpenAPI document itself is the one JSON success that is not an envelope.)
    if (op.documented && spec.method !== 'HEAD' && !op.template.endsWith('/openapi.json') && (res.headers.get('Content-Type') ?? '').includes('application/json') && res.text) {
      const json = JSON.parse(res.text) as { success?: unknown };
      if (json.success !== true) return `2xx without success:true: ${res.text.slice(0, 300)}`;
    }
    return null;
  }
  if (spec.method === 'HEAD') return null; // no body to check
  // Dashboard refusals are pages: HTML, with nothing of the internals in them (so is the embeddable card's 404).
  if (isPagePath(new URL(res.url).pathname) && (res.headers.get('Content-Type') ?? '').startsWith('text/html')) {
    return LEAK.test(res.text) ? `page leaks internals: ${res.text.slice(0, 300)}` : null;
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(res.text) as Record<string, unknown>;
  } catch {
    return `error body is not JSON: ${res.status} ${res.text.slice(0, 300)}`;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return `error body is not an object: ${res.text.slice(0, 300)}`;
  if (json.success !== false) return `error without success:false: ${res.text.slice(0, 300)}`;
  if (typeof json.error !== 'string' || json.error.length === 0) return `error without an error sentence: ${res.text.slice(0, 300)}`;
  if (typeof json.code !== 'string') return `error without a code: ${res.text.slice(0, 300)}`;
  const allowed = op.auth === 'webhook' ? { ...CONTRACT_ERRORS, ...WEBHOOK_ONLY_ERRORS } : CONTRACT_ERRORS;
  if (!(json.code in allowed)) return `code ${json.code} is not in the contract table`;
  if (allowed[json.code] !== res.status) return `code ${json.code} came with status ${res.status}, the contract says ${allowed[json.code]}`;
  const extra = Object.keys(json).filter((k) => !ENVELOPE_KEYS.has(k));
  if (extra.length > 0) return `unexpected envelope keys ${extra.join(', ')}`;
  if (json.errors !== undefined && (json.errors === null || typeof json.errors !== 'object' || Array.isArray(json.errors))) return 'errors is not an object';
  if (LEAK.test(res.text)) return `error body leaks internals: ${res.text.slice(0, 300)}`;
  if (!(res.headers.get('Content-Type') ?? '').includes('application/json')) return `error Content-Type ${res.headers.get('Content-Type')}`;
  return null;
}

const shorten = (value: unknown) =>
  JSON.stringify(value, (_k, v: unknown) => (typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}…(${v.length} chars)` : v));

/** Runs the property; on failure throws with the seed (whole file and this property) and a readable counterexample. */
async function fuzz(label: string, arb: fc.Arbitrary<RequestSpec>, numRuns: number, check: (spec: RequestSpec) => Promise<void>, seedOffset: number) {
  const seed = (SEED + seedOffset) | 0;
  const details = await fc.check(fc.asyncProperty(arb, check), { numRuns, seed });
  if (details.failed) {
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(
      `[fuzz] ${label} failed after ${details.numRuns} runs (${details.numShrinks} shrinks).\n` +
        `  file seed: ${SEED}  → rerun: SEED=${SEED} npx vitest run test/api/fuzz.test.ts\n` +
        `  property: seed ${details.seed}, path "${details.counterexamplePath}"\n` +
        `  request: ${shorten(details.counterexample?.[0])}\n` +
        `  cause: ${cause}`,
    );
  }
  return details;
}

// ---------------------------------------------------------------------------------------------------------------
// The runs
// ---------------------------------------------------------------------------------------------------------------

let ctx: Ctx;
let lastSnapshot: Snapshot;
const stats = { requests: 0, byStatus: new Map<number, number>(), byRoute: new Map<string, Record<number, number>>() };

beforeAll(async () => {
  const a = await newUser({ balance: 500 });
  const b = await newUser({ balance: 50 });
  const products = [
    await newProduct({ price: 1.5, stock: 150, category: 'fuzz' }),
    await newProduct({ price: 0.25, stock: 40, allowedQuantities: [5, 10] }),
    await newProduct({ price: 2, stock: 5, active: false }),
    await newProduct({ price: 3 }),
  ];
  const orders = [await buy(a, products[0].id, 1), await buy(a, products[0].id, 2), await buy(b, products[0].id, 1)];
  for (const order of orders) expect(order.status, order.text).toBe(201);
  const deposits = [
    await newDeposit(a, { amount: 10, gateway: 'gateway_one' }),
    await newDeposit(a, { amount: 25.5, gateway: 'gateway_two' }),
    await newDeposit(a, { amount: 7, gateway: 'gateway_three' }),
    await newDeposit(b, { amount: 12, gateway: 'gateway_one' }),
  ];
  const spare = await call('/api-keys', { key: a.key, body: { name: 'spare' } });
  expect(spare.status, spare.text).toBe(201);
  const keys = await call('/api-keys', { key: a.key });
  const aKeyId = (keys.json.data as Array<{ id: number; name: string }>).find((k) => k.name === 'Default key')!.id;
  const bKeys = await call('/api-keys', { key: b.key });
  ctx = {
    a,
    b,
    aKeyId,
    ids: {
      order: orders.map((o) => o.json.data.id as number),
      deposit: deposits.map((d) => d.deposit_id),
      key: [spare.json.data.id as number, (bKeys.json.data as Array<{ id: number }>)[0].id, 999_999],
      user: [a.id, b.id, 999_999],
      product: [...products.map((p) => p.id), 999_999],
    },
    depositAmounts: deposits.map((d) => d.amount),
    sessions: { a: await openSession(a.id), b: await openSession(b.id) },
  };
  lastSnapshot = await snapshot();
});

/** A dashboard session opened straight in the database (no PBKDF2 per fuzz run). */
async function openSession(userId: number): Promise<string> {
  const session = await newSessionToken();
  await runBatch(env.DB, [insertSession(sql`${userId}`, session.tokenHash, new Date().toISOString())]);
  return session.token;
}

/** Reopens a session a password change or sign-out ended; true when it had to (the snapshot is then stale). */
async function renewSessions(): Promise<boolean> {
  let renewed = false;
  for (const [who, user] of [['a', ctx.a], ['b', ctx.b]] as const) {
    if (!(await liveSession(ctx.sessions[who]))) {
      ctx.sessions[who] = await openSession(user.id);
      renewed = true;
    }
  }
  return renewed;
}

async function checkOne(op: Operation, spec: RequestSpec) {
  if (spec.auth.startsWith('session') && (await renewSessions())) lastSnapshot = await snapshot();
  const res = await send(ctx, spec);
  stats.requests++;
  stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
  const route = stats.byRoute.get(`${op.method} ${op.template}`) ?? {};
  route[res.status] = (route[res.status] ?? 0) + 1;
  stats.byRoute.set(`${op.method} ${op.template}`, route);
  if (testSettings.VITE_FUZZ_TRACE && op.template.includes(testSettings.VITE_FUZZ_TRACE)) console.info(`[trace] ${spec.method} ${res.url.slice(0, 120)} ${spec.auth} → ${res.status} ${res.text.slice(0, 160)}`);
  const problem = violation(op, spec, res);
  if (problem) throw new Error(`${spec.method} ${res.url.slice(0, 300)} → ${res.status}: ${problem}`);
  const before = lastSnapshot;
  const after = await snapshot();
  lastSnapshot = after;
  const changed = res.status >= 400 ? changedTables(before, after) : [];
  if (changed.length > 0) throw new Error(`${spec.method} ${res.url.slice(0, 300)} → ${res.status} ${res.text.slice(0, 200)} but changed ${changed.join(', ')}`);
}

const RUNS_PER_ROUTE = 20;
// PBKDF2 on every valid body
const SLOW_ROUTES = new Set(['POST /api/v2/admin/users', 'POST /api/v2/user/password', 'POST /dashboard/sign-in', 'POST /dashboard/sign-up', 'POST /dashboard/password']);

describe('fuzz: route discovery', () => {
  it('the OpenAPI document lists the routes being fuzzed (API key, admin, webhook and public groups)', () => {
    expect(DOCUMENTED.length).toBeGreaterThanOrEqual(25);
    const groups = new Set(DOCUMENTED.map((op) => op.auth));
    expect([...groups].sort()).toEqual(['admin', 'apiKey', 'public', 'session', 'webhook']);
    // Every route with a JSON body exposes its field names to the generators.
    // POST /admin/blocklist's body is one shape per rule type (oneOf): its fields are not listed at the top.
    for (const op of DOCUMENTED.filter((o) => ['POST', 'PUT', 'PATCH'].includes(o.method) && !(o.method === 'POST' && o.template === '/api/v2/admin/blocklist'))) {
      const bodyless = /cancel|mark-paid|refresh|password-reset$|\/(disable|enable|check)$|^\/pay\/|^\/test\/pay\/|^\/dashboard\/(sign-out|keys\/\{id\}\/revoke|verify-email\/resend)$|\/image(\/remove)?$|^\/api\/v2\/test\/(deposits\/\{id\}\/(fail|expire)|reset)$|\/claims\/\{id\}\/(replace|refund)(\/confirm)?$|\/blocklist\/\{id\}\/remove$|\/hold\/lift$|\/referrals?\/transfer$|\/referrals\/users\/\{id\}\/(off|on)$/.test(op.template);
      if (!bodyless) expect(op.bodyFields.length, `${op.method} ${op.template}`).toBeGreaterThan(0);
    }
    expect(DOCUMENTED.find((o) => o.template === '/api/v2/orders' && o.method === 'POST')?.bodyFields.sort()).toEqual(['coupon', 'expected_total', 'product_id', 'quantity', 'variant_id']);
  });
});

const GROUP_TITLES: Record<Auth, string> = {
  apiKey: 'fuzz: API-key routes',
  admin: 'fuzz: admin routes (admin token)',
  webhook: 'fuzz: webhook routes (with and without valid signatures)',
  public: 'fuzz: public routes (stock, service info, OpenAPI, checkout)',
  session: 'fuzz: dashboard pages and forms (session cookie, form bodies)',
};

(['apiKey', 'admin', 'webhook', 'public', 'session'] as Auth[]).forEach((group) => {
  describe(GROUP_TITLES[group], () => {
    const ops = OPERATIONS.filter((op) => op.auth === group);
    it.each(ops.map((op) => [`${op.method} ${op.template}`, op] as const))(
      '%s: no 5xx, contract error envelopes, 4xx change nothing',
      async (label, op) => {
        const numRuns = runs(SLOW_ROUTES.has(label) ? 15 : op.auth === 'webhook' ? 60 : RUNS_PER_ROUTE);
        const offset = OPERATIONS.indexOf(op) * 7919;
        await fuzz(label, requestArb(ctx, op), numRuns, (spec) => checkOne(op, spec), offset);
      },
      120_000,
    );
  });
});

describe('fuzz: unknown routes', () => {
  it('random paths inside and outside /api/v2 answer a contract envelope (404), never a 5xx', async () => {
    const op = undocumented('GET', '{path}');
    const segment = fc.oneof(fc.constantFrom(...HOSTILE_IDS, 'api', 'v2', 'v1', 'admin', 'stock', 'orders', '..', '.', 'openapi.json'), fc.string({ maxLength: 8 }).map(percentEncode));
    const arb = fc.record({
      method: fc.constantFrom(...METHODS),
      path: fc.tuple(fc.constantFrom('/api/v2/', '/', '/api/v2/admin/', '/api/v2/webhooks/', '/pay/', '/dashboard/'), fc.array(segment, { maxLength: 5 })).map(([prefix, parts]) => prefix + parts.join('/')),
      query: queryArb(ctx, op),
      auth: fc.constantFrom('none', 'key:header', 'admin:bearer'),
      authJunk: fc.constant(''),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      body: bodyArb(ctx, op),
      transport: fc.constantFrom<RequestSpec['transport']>('text', 'bytes'),
      idempotencyKey: fc.constant(undefined),
      requestId: fc.constant(undefined),
    });
    await fuzz('unknown routes', arb, runs(40), (spec) => checkOne(op, spec), 1);
  });
});

describe('fuzz: malformed JSON on every body route', () => {
  it('answers 422 VALIDATION_FAILED (or the route\'s auth/size error first) for every malformed body, changing nothing', async () => {
    const before = await snapshot();
    // JSON routes only: the dashboard's forms are urlencoded (their malformed bodies are fuzzed with the pages).
    // Test-mode routes answer the suite's live key 403 TEST_KEY_REQUIRED first: their auth error (test/sandbox/test-mode.test.ts).
    const bodyRoutes = DOCUMENTED.filter((op) => op.bodyFields.length > 0 && op.auth !== 'session' && !op.template.startsWith('/api/v2/test/'));
    const broken = MALFORMED_JSON.filter((text) => {
      try {
        // An HTTP body's UTF-8 BOM is dropped when it is decoded (RFC 8259 lets parsers ignore it): not malformed.
        JSON.parse(text.replace(/^\uFEFF/, ''));
        return false;
      } catch {
        return true;
      }
    });
    for (const op of bodyRoutes) {
      const path = op.pathParams.reduce(
        (t, name) => t.replace(`{${name}}`, name === 'gateway' ? 'gateway_one' : String(pathIdPool(ctx, op.template, name)[0])),
        op.template,
      );
      for (const body of broken) {
        const spec: RequestSpec = {
          method: op.method,
          path,
          query: [],
          auth: op.auth === 'apiKey' ? 'key:header' : op.auth === 'admin' ? 'admin:bearer' : 'sig:valid',
          authJunk: '',
          contentType: 'application/json',
          body,
          transport: 'text',
          idempotencyKey: undefined,
          requestId: undefined,
        };
        const res = await send(ctx, spec);
        const problem = violation(op, spec, res);
        expect(problem, `${op.method} ${path} ${shorten(body)}`).toBeNull();
        expect(res.status, `${op.method} ${path} ${shorten(body)} → ${res.text.slice(0, 200)}`).toBe(422);
        expect(JSON.parse(res.text).code).toBe('VALIDATION_FAILED');
      }
    }
    const changed = changedTables(before, await snapshot());
    expect(changed, 'a batch of failed requests changed tables').toEqual([]);
    lastSnapshot = await snapshot();
  });
});

describe('fuzz: summary', () => {
  it('sent a meaningful mix of requests (some succeeded, most were refused)', () => {
    const statuses = Object.fromEntries([...stats.byStatus].sort(([x], [y]) => x - y));
    console.info(`[fuzz] seed ${SEED}: ${stats.requests} requests, statuses ${JSON.stringify(statuses)}`);
    if (testSettings.VITE_FUZZ_VERBOSE) for (const [route, counts] of stats.byRoute) console.info(`[fuzz]   ${route}: ${JSON.stringify(counts)}`);
    expect(stats.requests).toBeGreaterThan(runs(500));
    expect([...stats.byStatus.keys()].some((s) => s < 300)).toBe(true);
    expect([...stats.byStatus.keys()].some((s) => s >= 400)).toBe(true);
  });
});
