import { ERROR_STATUS } from '../src/lib/errors';

// Checks a response against the OpenAPI document the service publishes: the operation must document the status,
// the content type must be the documented one, and a JSON body must match the documented schema with no
// undocumented field. Pure (no Workers imports), so the worker tests and the Node e2e tests share it.

type Schema = Record<string, any>;
export interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components?: { schemas?: Record<string, Schema> };
}

const ROUTE_ONLY_CODES = new Set(['NOT_FOUND', 'UNAUTHORIZED', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'VALIDATION_FAILED']);

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

/** Everything about one response that disagrees with the document (empty when it conforms). */
export async function contractViolations(doc: Doc, method: string, url: string, response: Response): Promise<string[]> {
  const { pathname } = new URL(url);
  if (!response.headers.get('X-Request-Id')) return ['no X-Request-Id'];
  if (method === 'OPTIONS' && response.status === 204) return corsPreflightViolations(response);
  const text = await response.text();
  const contentType = (response.headers.get('Content-Type') ?? '').split(';')[0].trim();
  const json = contentType === 'application/json' && text ? JSON.parse(text) : undefined;
  const found = findOperation(doc, method === 'HEAD' ? 'GET' : method, pathname);
  if (!found) {
    // No such operation: the router's own answers (unknown route, auth or body limits before routing).
    if (method === 'HEAD') return [401, 404, 413, 429].includes(response.status) && text === '' ? [] : [`HEAD ${pathname}: ${response.status}`];
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


/** CORS preflights (on /stock) are answered by the middleware, not an operation: 204 with the allowed methods. */
function corsPreflightViolations(response: Response): string[] {
  if (response.status !== 204) return [`OPTIONS answered ${response.status}`];
  return response.headers.get('Access-Control-Allow-Methods') ? [] : ['OPTIONS without Access-Control-Allow-Methods'];
}

/** A fetch whose every response is checked against the document `loadDoc` returns; a violation throws. */
export function checkedFetch(fetcher: (request: Request) => Promise<Response>, loadDoc: () => Promise<Doc>) {
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const response = await fetcher(request.clone());
    await assertContract(await loadDoc(), request.method, request.url, response);
    return response;
  };
}

export async function assertContract(doc: Doc, method: string, url: string, response: Response): Promise<void> {
  const violations = await contractViolations(doc, method, url, response.clone());
  if (violations.length > 0) throw new Error(`Response breaks the OpenAPI contract:\n  ${violations.join('\n  ')}`);
}
