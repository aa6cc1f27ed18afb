import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { SELF } from '../contract';
import { ADMIN_TOKEN, BASE, call, hmacSha256Hex, newProduct, newUser, WEBHOOK_SECRETS, type TestUser } from '../helpers';
import { createSchemaChecker, type Doc, type Schema } from '../json-schema';
import { invalidValue, validValue } from '../schema-arbitraries';

// Document-driven fuzzing: every operation of the served OpenAPI document gets requests generated from its own
// parameter and body schemas (test/schema-arbitraries.ts), sent with real credentials to the real worker and D1.
// Ajv on the same schemas decides what the document says of each request, and the API must agree:
//   - a request the document calls valid is never a 422 (unless for a rule about stored state, listed below) and
//     never a 401; other documented 4xx (404, INSUFFICIENT_BALANCE, ...) are answers about state;
//   - a request it calls invalid (a valid one with one part mutated: a required part dropped, another type, a value
//     out of range or off its pattern) is always a 4xx;
//   - every response passes the contract check (test/contract.ts: documented status, Ajv on the body).
// Ids come from the schemas (mostly small: those exist) and from the document's `links`: an id a response returns
// is reused by the operations its links name, as a stateful client would.
// test/api/fuzz.test.ts is the other fuzzer: hostile bytes, transports and credentials, and "a 4xx changes nothing".
//
// Seeded and reproducible: SEED=<n> npx vitest run test/api/contract-fuzz.test.ts (the seed is printed).

const PINNED_SEED = 20_261_123;
const seedText = (import.meta as unknown as { env: Record<string, string | undefined> }).env.SEED ?? '';
const SEED = /^-?\d{1,10}$/.test(seedText) ? Number(seedText) : PINNED_SEED;
const RUNS = 150;
/** Operations without parameters or body have one request to send; a few show it is stable. */
const RUNS_WITHOUT_INPUT = 3;

/**
 * 422s that no schema can express: they depend on stored rows (a taken email or sku, the current password, a key's
 * first request) or relate two fields (the password confirmation). Each is matched by code or by field and message.
 */
const STATE_RULES: Array<{ code?: string; field?: string; message?: RegExp }> = [
  { code: 'IDEMPOTENCY_KEY_REUSED' },
  { field: 'email', message: /already been taken/ },
  { field: 'sku', message: /already been taken/ },
  { field: 'current_password', message: /current password is incorrect|changed concurrently/ },
  { field: 'new_password', message: /confirmation does not match/ },
  // Volume prices relate their tiers to each other and to the price; a coupon's window relates two timestamps, and
  // a coupon has exactly one kind (percent_off or amount_off; the descriptions say so).
  { field: 'percent_off', message: /one of percent_off and amount_off/ },
  { field: 'volume_prices', message: /than the one before|below the (product|variant)'s price/ },
  { field: 'price', message: /above every volume price/ },
  { field: 'expires_at', message: /must be after starts_at/ },
  { field: 'starts_at', message: /must be before expires_at/ },
  // A coupon code already taken (whatever its case).
  { field: 'code', message: /already been taken/ },
  // A refresh of a deposit that was made with the generic gateway: nobody to ask.
  { field: 'id', message: /has no payment provider to ask/ },
  // A payment provider refusing an invoice (a real provider on the slot).
  { code: 'GATEWAY_REJECTED' },
  // An API key's expiry must be later than now: the document cannot say when now is.
  { field: 'expires_at', message: /must be in the future/ },
  // After the sale: an order's warranty and items, what is left to refund, a rule already on the blocklist.
  { code: 'WARRANTY_EXPIRED' },
  { field: 'index', message: /must be below/ },
  { field: 'amount', message: /left to refund|is cancelled|share/ },
  { field: 'value', message: /already on the blocklist/ },
  // An ip rule as wide as /0../7 (IPv4) or /0../15 (IPv6) would close the shop; the pattern states the form only.
  { field: 'value', message: /may not be a range wider than/ },
  // Variants: a variant_id of another product (or a product with several variants and none named), and the product
  // fields that live on its variants once it has several.
  { field: 'variant_id', message: /is not a variant of this product|Choose a variant|has several variants/ },
  ...['price', 'sku', 'volume_prices', 'allowed_quantities'].map((field) => ({ field, message: /This product has variants/ })),
  // Referrals: a code nobody has.
  { field: 'referral_code', message: /No user has this referral code/ },
];

const doc = (await (await SELF.fetch(`${BASE}/openapi.json`)).json()) as Doc;
const requestSchemas = createSchemaChecker(doc, { closed: false });
const resolve = (schema: Schema): Schema =>
  typeof schema?.$ref === 'string' ? resolve(doc.components!.schemas![schema.$ref.split('/').pop()!]) : schema;
const accepts = (schema: Schema, value: unknown) => requestSchemas.errors(schema, value).length === 0;

// ---------------------------------------------------------------------------------------------------------------
// Operations, as the document states them
// ---------------------------------------------------------------------------------------------------------------

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

interface Operation {
  id: string;
  method: string;
  template: string;
  parameters: Parameter[];
  body?: { required: boolean; content: Record<string, Schema> };
  security: Array<Record<string, string[]>>;
  links: Record<string, Record<string, { operationId: string; parameters: Record<string, string> }>>;
}

// The dashboard's pages (tag Dashboard) answer HTML to a browser session, not JSON to a key: test/api/fuzz.test.ts fuzzes
// them with session cookies and form bodies.
// An image upload's validity is its signature bytes, which no schema states: test/catalogue/catalogue.test.ts checks it.
const binaryBody = (op: { requestBody?: { content?: Record<string, { schema?: { format?: string } }> } }) =>
  Object.values(op.requestBody?.content ?? {}).some((media) => media.schema?.format === 'binary');

const OPERATIONS: Operation[] = Object.entries(doc.paths).flatMap(([template, methods]) =>
  Object.entries(methods).filter(([, op]) => !op.tags?.includes('Dashboard') && !binaryBody(op)).map(([method, op]) => ({
    id: op.operationId,
    method: method.toUpperCase(),
    template,
    parameters: op.parameters ?? [],
    body: op.requestBody && {
      required: op.requestBody.required === true,
      content: Object.fromEntries(Object.entries(op.requestBody.content as Record<string, { schema: Schema }>).map(([type, media]) => [type, media.schema])),
    },
    security: op.security ?? [],
    links: Object.fromEntries(Object.entries(op.responses as Record<string, { links?: Operation['links'][string] }>).map(([status, r]) => [status, r.links ?? {}])),
  })),
);

/** `operationId parameter` → the ids responses returned for it, through the document's links. */
const linked = new Map<string, unknown[]>();
const linkTargets = new Set(OPERATIONS.flatMap((op) => Object.values(op.links).flatMap((links) => Object.values(links).flatMap((l) => Object.keys(l.parameters).map((p) => `${l.operationId} ${p}`)))));

/** Creators first (their responses feed the links), then reads, then changes that disturb the others (PUT, PATCH, DELETE). */
const rank = (op: Operation) => (Object.values(op.links).some((links) => Object.keys(links).length > 0) ? 0 : ['PUT', 'PATCH', 'DELETE'].includes(op.method) ? 2 : 1);
const ORDERED = [...OPERATIONS].sort((a, b) => rank(a) - rank(b));

// ---------------------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------------------

/** A parameter's value: from its schema, or the n-th id a link offered (resolved when sent), or left out. */
type Slot = { value: unknown } | { link: number; otherwise: unknown } | undefined;

interface Draft {
  slots: Record<string, Slot>;
  body: { type: string; value: unknown } | undefined;
  security: number;
  /** What was broken on purpose, for the failure message. */
  mutation?: string;
}

function slotArb(op: Operation, parameter: Parameter): fc.Arbitrary<Slot> {
  const fromSchema = validValue(parameter.schema, resolve, accepts);
  const value = fromSchema.map((v): Slot => ({ value: v }));
  const fromLink = fc.tuple(fc.nat(), fromSchema).map(([n, otherwise]): Slot => ({ link: n, otherwise }));
  const present = linkTargets.has(`${op.id} ${parameter.name}`) ? fc.oneof(value, fromLink) : value;
  return parameter.required ? present : fc.option(present, { nil: undefined, freq: 3 });
}

function bodyArb(op: Operation): fc.Arbitrary<Draft['body']> {
  if (!op.body) return fc.constant(undefined);
  const byType = Object.entries(op.body.content).map(([type, schema]) => validValue(schema, resolve, accepts).map((value) => ({ type, value })));
  const body = fc.oneof(...byType);
  return op.body.required ? body : fc.option(body, { nil: undefined, freq: 4 });
}

const validDraft = (op: Operation): fc.Arbitrary<Draft> =>
  fc.record({
    slots: fc.record(Object.fromEntries(op.parameters.map((p) => [p.name, slotArb(op, p)]))),
    body: bodyArb(op),
    security: fc.nat(),
  });

/** A valid draft with one part broken: a parameter or the body dropped (when required) or given a refused value. */
function invalidDraft(op: Operation): fc.Arbitrary<Draft> | undefined {
  const mutations: Array<fc.Arbitrary<(draft: Draft) => Draft>> = [];
  for (const p of op.parameters) {
    if (p.required && p.in !== 'path') mutations.push(fc.constant((d: Draft) => ({ ...d, slots: { ...d.slots, [p.name]: undefined }, mutation: `${p.name} left out` })));
    mutations.push(invalidValue(p.schema, resolve, accepts).map((bad) => (d: Draft) => ({ ...d, slots: { ...d.slots, [p.name]: { value: bad } }, mutation: `${p.name} = ${preview(bad)}` })));
  }
  if (op.body) {
    if (op.body.required) mutations.push(fc.constant((d: Draft) => ({ ...d, body: undefined, mutation: 'body left out' })));
    for (const [type, schema] of Object.entries(op.body.content)) {
      mutations.push(invalidValue(schema, resolve, accepts).map((bad) => (d: Draft) => ({ ...d, body: { type, value: bad }, mutation: `body = ${preview(bad)}` })));
    }
  }
  if (mutations.length === 0) return undefined;
  return fc.tuple(validDraft(op), fc.oneof(...mutations)).map(([draft, mutate]) => mutate(draft));
}

const preview = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 120)}…(${text.length} chars)` : text;
};

const wellFormed = (text: string) => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/** A parameter value as sent: path `simple` and query `form` style, arrays comma-separated (explode: false). */
const asText = (value: unknown): string =>
  Array.isArray(value) ? value.map(asText).join(',') : typeof value === 'object' && value !== null ? JSON.stringify(value) : wellFormed(String(value));

/** A parameter's text read back as its schema's type, as the server must (only canonical numerals are numbers). */
function fromText(text: string, schemaIn: Schema): unknown {
  const schema = resolve(schemaIn);
  const types: string[] = [].concat(schema.type ?? []);
  if (types.includes('array')) return text === '' ? [] : text.split(',').map((part) => fromText(part, schema.items ?? {}));
  // Read as written: a numeral a double prints otherwise (`1.0000000000000000001`) is not the number it would round to.
  if ((types.includes('integer') || types.includes('number')) && /^-?(0|[1-9]\d*)(\.\d+)?$/.test(text) && String(Number(text)) === text) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/**
 * A JSON body as the document reads it: numbers are the values written. The generator writes every double as
 * JSON.stringify does, so a number whose text differs from that (one sent through JSON.rawJSON with more digits than
 * a double holds) is judged as its text, which no number schema accepts, rather than as the double JSON.parse
 * rounds it to.
 */
const asWritten = (text: string): unknown =>
  JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && context.source !== String(value) ? context.source : value,
  );

/** What a header carries: printable ASCII (anything else cannot be sent), without the spaces HTTP strips around it. */
const headerText = (value: unknown) => {
  const text = asText(value);
  return /[^\t\x20-\x7e]/.test(text) ? undefined : text.replace(/^[\t ]+|[\t ]+$/g, '');
};

interface Credentials {
  user: TestUser;
  keyId: number;
}

interface Built {
  url: string;
  init: RequestInit;
  /** Why the document calls the request invalid (empty: valid). */
  problems: string[];
  description: string;
}

/** The request a draft stands for, and what the document says of it. */
async function build(op: Operation, draft: Draft, credentials: Credentials): Promise<Built | undefined> {
  const problems: string[] = [];
  const headers = new Headers();
  const query: string[] = [];
  let path = op.template;
  for (const p of op.parameters) {
    const slot = draft.slots[p.name];
    const pool = slot && 'link' in slot ? linked.get(`${op.id} ${p.name}`) : undefined;
    const value = slot === undefined ? undefined : 'link' in slot ? (pool?.length ? pool[slot.link % pool.length] : slot.otherwise) : slot.value;
    const text = value === undefined ? undefined : p.in === 'header' ? headerText(value) : asText(value);
    if (text === undefined) {
      if (p.required) problems.push(`${p.name}: required`);
      continue;
    }
    problems.push(...requestSchemas.errors(p.schema, p.in === 'header' ? text : fromText(text, p.schema), p.name));
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(text));
    else if (p.in === 'query') query.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(text)}`);
    else headers.set(p.name, text);
  }
  // The fuzzer never revokes the key it authenticates with.
  if (op.id === 'revokeApiKey' && path.endsWith(`/${credentials.keyId}`)) return undefined;
  // Nor disables its user.
  if (op.id === 'updateUser' && path.endsWith(`/${credentials.user.id}`)) return undefined;

  let bodyText: string | undefined;
  if (draft.body && draft.body.value !== undefined) {
    const { type, value } = draft.body;
    bodyText = type === 'application/json' ? JSON.stringify(value) : asText(value);
    headers.set('Content-Type', type);
    const received = type === 'application/json' ? asWritten(bodyText) : bodyText;
    problems.push(...requestSchemas.errors(op.body!.content[type], received, 'body'));
  } else if (op.body?.required) problems.push('body: required');

  const requirement = op.security.length > 0 ? op.security[draft.security % op.security.length] : {};
  for (const scheme of Object.keys(requirement)) {
    if (scheme === 'ApiKeyHeader') headers.set('X-API-Key', credentials.user.key);
    else if (scheme === 'ApiKeyQuery') query.push(`api_key=${encodeURIComponent(credentials.user.key)}`);
    else if (scheme === 'AdminBearer') headers.set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    else if (scheme === 'WebhookSignature') {
      const gateway = decodeURIComponent(path.split('/').pop()!);
      const t = Math.floor(Date.now() / 1000);
      headers.set('X-Signature', `t=${t},v1=${await hmacSha256Hex(WEBHOOK_SECRETS[gateway] ?? 'unknown-gateway', `${t}.${bodyText ?? ''}`)}`);
    } else throw new Error(`the document names a security scheme the fuzzer cannot satisfy: ${scheme}`);
  }
  const url = `http://localhost${path}${query.length > 0 ? `?${query.join('&')}` : ''}`;
  const headerParameters = op.parameters.filter((p) => p.in === 'header' && headers.has(p.name)).map((p) => ` ${p.name}: ${preview(headers.get(p.name))}`);
  const description = `${op.method} ${url}${headerParameters.join('')}${bodyText === undefined ? '' : ` ${headers.get('Content-Type')} ${preview(bodyText)}`}`;
  return { url, init: { method: op.method, headers, body: bodyText }, problems, description };
}

// ---------------------------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------------------------

function isStateRule(body: { code?: string; errors?: Record<string, string[]> } | undefined): boolean {
  if (STATE_RULES.some((rule) => rule.code !== undefined && rule.code === body?.code)) return true;
  const errors = Object.entries(body?.errors ?? {});
  return (
    body?.code === 'VALIDATION_FAILED' &&
    errors.length > 0 &&
    errors.every(([field, messages]) => messages.every((message) => STATE_RULES.some((rule) => rule.field === field && rule.message!.test(message))))
  );
}

/** `$response.body#/json/pointer` of a link, evaluated on a response body. */
const atPointer = (body: unknown, expression: string) =>
  expression
    .replace(/^\$response\.body#\//, '')
    .split('/')
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], body);

interface Tally {
  valid: number;
  invalid: number;
  statuses: Record<number, number>;
}

async function exercise(op: Operation, draft: Draft, credentials: Credentials, tally: Tally) {
  const request = await build(op, draft, credentials);
  if (!request) return;
  const valid = request.problems.length === 0;
  const context = () =>
    `${request.description}\n  the document says: ${valid ? 'valid' : request.problems.join('; ')}${draft.mutation ? ` (mutated: ${draft.mutation})` : ''}`;
  let response: Response;
  try {
    response = await SELF.fetch(request.url, request.init);
  } catch (err) {
    throw new Error(`${context()}\n  ${(err as Error).message}`);
  }
  const text = await response.text();
  const json = (response.headers.get('Content-Type') ?? '').startsWith('application/json') && text ? JSON.parse(text) : undefined;
  tally[valid ? 'valid' : 'invalid']++;
  tally.statuses[response.status] = (tally.statuses[response.status] ?? 0) + 1;
  const answered = `\n  the API answered ${response.status} ${text.slice(0, 300)}`;
  if (response.status >= 500) throw new Error(`a 5xx:\n  ${context()}${answered}`);
  if (valid && response.status === 422 && !isStateRule(json)) throw new Error(`a request the document calls valid was refused:\n  ${context()}${answered}`);
  if (valid && response.status === 401) throw new Error(`valid credentials were refused:\n  ${context()}${answered}`);
  if (!valid && response.status < 400) throw new Error(`a request the document calls invalid was accepted:\n  ${context()}${answered}`);
  for (const link of Object.values(op.links[String(response.status)] ?? {})) {
    for (const [parameter, expression] of Object.entries(link.parameters)) {
      const value = atPointer(json, expression);
      if (value !== undefined) linked.set(`${link.operationId} ${parameter}`, [...(linked.get(`${link.operationId} ${parameter}`) ?? []), value]);
    }
  }
}

let credentials: Credentials;

beforeAll(async () => {
  console.info(`[contract-fuzz] seed ${SEED}: rerun with SEED=${SEED} npx vitest run test/api/contract-fuzz.test.ts`);
  // Something to buy: products with stock, and a funded buyer.
  const user = await newUser({ balance: 1_000_000 });
  for (const stock of [300, 300, 50]) await newProduct({ price: 0.5, stock });
  const keys = await call('/api-keys', { key: user.key });
  credentials = { user, keyId: (keys.json.data as Array<{ id: number }>)[0].id };
});

describe('document-driven fuzz: every operation of the served OpenAPI document', () => {
  it('covers every operation, each with an operationId', () => {
    expect(OPERATIONS.length).toBeGreaterThanOrEqual(30);
    expect(OPERATIONS.filter((op) => !op.id)).toEqual([]);
  });

  it.each(ORDERED.map((op, index) => [op.id, op, index] as const))('%s: valid requests are never refused as invalid, invalid ones always are', async (_id, op, index) => {
    const invalid = invalidDraft(op);
    const hasInput = op.parameters.length > 0 || op.body !== undefined;
    const draft = invalid ? fc.oneof(validDraft(op), invalid) : validDraft(op);
    const tally: Tally = { valid: 0, invalid: 0, statuses: {} };
    const seed = (SEED + index * 7919) | 0;
    const details = await fc.check(
      fc.asyncProperty(draft, (d) => exercise(op, d, credentials, tally)),
      { numRuns: hasInput ? RUNS : RUNS_WITHOUT_INPUT, seed, endOnFailure: true },
    );
    if (details.failed) {
      throw new Error(
        `[contract-fuzz] ${op.id} failed at run ${details.numRuns} (file seed ${SEED}, property seed ${seed}; rerun: SEED=${SEED} npx vitest run test/api/contract-fuzz.test.ts)\n` +
          `  ${(details.errorInstance as Error)?.message ?? details.errorInstance}`,
      );
    }
    console.info(`[contract-fuzz] ${op.id}: ${tally.valid} valid, ${tally.invalid} invalid, statuses ${JSON.stringify(tally.statuses)}`);
    // Both properties were exercised, not just one.
    if (hasInput) expect(tally.valid, 'requests the document calls valid').toBeGreaterThan(RUNS / 5);
    // Fewer invalid ones where every parameter is free query text (a type mutation of query text is still text: only
    // over-long values and a bad page are invalid), as on the storefront; still enough to see each refused.
    // An operation whose only input is unconstrained text (the referral link's code: any text opens the shop) has no
    // invalid form that survives being sent as text.
    const freeText = !op.body && op.parameters.every((p) => {
      const schema = resolve(p.schema);
      return schema.type === 'string' && [schema.pattern, schema.maxLength, schema.minLength, schema.enum, schema.format].every((rule) => rule === undefined);
    });
    if (invalid && !freeText) expect(tally.invalid, 'requests the document calls invalid').toBeGreaterThan(RUNS / 10);
  });
});
