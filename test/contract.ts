import { createExecutionContext, SELF as WORKER, waitOnExecutionContext } from 'cloudflare:test';
import { createApp } from '../src/app';
import type { Bindings } from '../src/env';
import { ERROR_STATUS } from '../src/lib/errors';

// Every response the suite receives is checked against the OpenAPI document the service publishes: the operation
// must document the status, the content type must be the documented one, and a JSON body must match the documented
// schema with no undocumented field. Tests import `SELF` and `createCheckedApp` from here instead of the raw ones.

type Schema = Record<string, any>;
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components?: { schemas?: Record<string, Schema> };
}

let docPromise: Promise<Doc> | undefined;
const loadDoc = () => (docPromise ??= WORKER.fetch('http://localhost/api/v2/openapi.json').then((r) => r.json() as Promise<Doc>));

const ROUTE_ONLY_CODES = new Set(['NOT_FOUND', 'UNAUTHORIZED', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'VALIDATION_FAILED']);
// Outside the API document: the dev checkout page, the docs page and its assets, the document itself.
const UNDOCUMENTED_PREFIXES = ['/pay/', '/docs', '/api/v2/openapi.json'];

function findOperation(doc: Doc, method: string, path: string) {
  for (const [template, operations] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(path) && operations[method.toLowerCase()]) return { template, operation: operations[method.toLowerCase()] };
  }
  return undefined;
}

function resolve(doc: Doc, schema: Schema): Schema {
  const ref = schema.$ref as string | undefined;
  return ref ? resolve(doc, doc.components!.schemas![ref.replace('#/components/schemas/', '')]) : schema;
}

const typeOf = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;

/** The JSON Schema subset the document uses; objects are closed (an undocumented field is an error). */
function validate(doc: Doc, schemaIn: Schema, value: unknown, at: string): string[] {
  const schema = resolve(doc, schemaIn);
  if (schema.anyOf || schema.oneOf) {
    const options = (schema.anyOf ?? schema.oneOf) as Schema[];
    return options.some((option) => validate(doc, option, value, at).length === 0) ? [] : [`${at}: matches none of the documented shapes`];
  }
  if (schema.allOf) {
    // An extended schema: one closed object with the properties of all its parts.
    const parts = (schema.allOf as Schema[]).map((part) => resolve(doc, part));
    const merged = {
      type: 'object',
      properties: Object.assign({}, ...parts.map((part) => part.properties ?? {})),
      required: parts.flatMap((part) => part.required ?? []),
    };
    return validate(doc, merged, value, at);
  }
  if ('const' in schema && value !== schema.const) return [`${at}: expected ${JSON.stringify(schema.const)}`];
  if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`];
  if (schema.type) {
    const types = ([] as string[]).concat(schema.type);
    const actual = typeOf(value);
    const ok = types.some((t) => t === actual || (t === 'number' && actual === 'integer'));
    if (!ok) return [`${at}: expected ${types.join('|')}, got ${actual}`];
  }
  if (typeOf(value) === 'object' && (schema.properties || schema.type === 'object')) {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const errors = ((schema.required ?? []) as string[]).filter((key) => !(key in object)).map((key) => `${at}.${key}: required`);
    for (const [key, item] of Object.entries(object)) {
      if (properties[key]) errors.push(...validate(doc, properties[key], item, `${at}.${key}`));
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') errors.push(...validate(doc, schema.additionalProperties, item, `${at}.${key}`));
      else if (!schema.additionalProperties) errors.push(`${at}.${key}: undocumented field`);
    }
    return errors;
  }
  if (typeOf(value) === 'array' && schema.items) return (value as unknown[]).flatMap((item, i) => validate(doc, schema.items, item, `${at}[${i}]`));
  return [];
}

function checkErrorEnvelope(status: number, body: any): string[] {
  const code = body?.code as keyof typeof ERROR_STATUS;
  if (body?.success !== false || typeof body?.error !== 'string' || !(code in ERROR_STATUS)) return ['not the contract error envelope'];
  return ERROR_STATUS[code] === status ? [] : [`code ${code} is ${ERROR_STATUS[code]}, not ${status}`];
}

export async function contractViolations(method: string, url: string, response: Response): Promise<string[]> {
  const { pathname } = new URL(url);
  if (!response.headers.get('X-Request-Id')) return ['no X-Request-Id'];
  if (method === 'OPTIONS' || UNDOCUMENTED_PREFIXES.some((prefix) => pathname.startsWith(prefix))) return [];
  const text = await response.text();
  const contentType = (response.headers.get('Content-Type') ?? '').split(';')[0].trim();
  const json = contentType === 'application/json' && text ? JSON.parse(text) : undefined;
  const doc = await loadDoc();
  const found = findOperation(doc, method === 'HEAD' ? 'GET' : method, pathname);
  if (!found) {
    // No such operation: the router's own answers (unknown route, auth or body limits before routing).
    if (!json) return [`${method} ${pathname}: ${response.status} without a JSON error`];
    const errors = checkErrorEnvelope(response.status, json);
    return ROUTE_ONLY_CODES.has(json.code) ? errors : [...errors, `${method} ${pathname}: undocumented operation answered ${json.code}`];
  }
  const documented = found.operation.responses[String(response.status)];
  const where = `${method} ${found.template} ${response.status}`;
  if (!documented) return [`${where}: status not documented`];
  if (response.status === 304 || method === 'HEAD') return text === '' ? [] : [`${where}: body on a bodiless response`];
  const content = documented.content;
  if (!content) return text === '' ? [] : [`${where}: documented without a body but has one`];
  if (!content[contentType]) return [`${where}: content type ${contentType} not documented (${Object.keys(content).join(', ')})`];
  if (contentType !== 'application/json') return [];
  const errors = validate(doc, content[contentType].schema, json, 'body').map((e) => `${where}: ${e}`);
  if (response.status >= 400) errors.push(...checkErrorEnvelope(response.status, json).map((e) => `${where}: ${e}`));
  return errors;
}

async function assertContract(method: string, url: string, response: Response): Promise<void> {
  const violations = await contractViolations(method, url, response.clone());
  if (violations.length > 0) throw new Error(`Response breaks the OpenAPI contract:\n  ${violations.join('\n  ')}`);
}

/** The worker under test, every response checked against the published contract. */
export const SELF = {
  async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const request = new Request(input, init);
    const response = await WORKER.fetch(request.clone());
    await assertContract(request.method, request.url, response);
    return response;
  },
};

/** An in-test app (for env overrides), every response checked against the published contract. */
export function createCheckedApp() {
  const app = createApp();
  return {
    async request(path: string, init: RequestInit = {}, env: Partial<Bindings> | Record<string, unknown> = {}): Promise<Response> {
      const ctx = createExecutionContext();
      const response = await app.request(path, init, env, ctx);
      await waitOnExecutionContext(ctx);
      await assertContract(init.method ?? 'GET', new URL(path, 'http://localhost').href, response);
      return response;
    },
  };
}
