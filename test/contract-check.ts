import { ERROR_STATUS } from '../src/lib/errors';
import { createSchemaChecker, type Doc, type SchemaChecker } from './json-schema';

export type { Doc } from './json-schema';

// Checks a response against the OpenAPI document the service publishes: the operation must document the status,
// the content type must be the documented one, and a JSON body must match the documented schema (Ajv, with its
// ranges, patterns and formats) with no undocumented field. Pure (no Workers imports), so the worker tests and the
// Node e2e tests share it.

const ROUTE_ONLY_CODES = new Set(['METHOD_NOT_ALLOWED', 'NOT_FOUND', 'UNAUTHORIZED', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'VALIDATION_FAILED']);

function findOperation(doc: Doc, method: string, path: string) {
  for (const [template, operations] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(path) && operations[method.toLowerCase()]) return { template, operation: operations[method.toLowerCase()] };
  }
  return undefined;
}

const responseCheckers = new WeakMap<Doc, SchemaChecker>();
const responseChecker = (doc: Doc) => {
  let checker = responseCheckers.get(doc);
  if (!checker) responseCheckers.set(doc, (checker = createSchemaChecker(doc, { closed: true })));
  return checker;
};

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
  // Bytes decoded here, not `.text()`: workerd warns about reading an image as text.
  const text = new TextDecoder().decode(await response.arrayBuffer());
  const contentType = (response.headers.get('Content-Type') ?? '').split(';')[0].trim();
  const json = contentType === 'application/json' && text ? JSON.parse(text) : undefined;
  const found = findOperation(doc, method === 'HEAD' ? 'GET' : method, pathname);
  if (!found) {
    // No such operation: the router's own answers (unknown route, auth or body limits before routing).
    if (method === 'HEAD') return [401, 404, 405, 413, 429].includes(response.status) && text === '' ? [] : [`HEAD ${pathname}: ${response.status}`];
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
  const errors = responseChecker(doc).errors(content[contentType].schema, json, 'body').map((e) => `${where}: ${e}`);
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
