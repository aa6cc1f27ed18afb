import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

// The OpenAPI document's schemas, checked by Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1, with formats
// asserted). Pure (no Workers imports): the worker tests, the document-driven fuzz test and the Node e2e tests share it.

export type Schema = Record<string, any>;
export interface Doc {
  paths: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface SchemaChecker {
  /** What is wrong with `value` (empty when it matches), each message prefixed with `at` and the JSON pointer. */
  errors(schema: Schema, value: unknown, at?: string): string[];
}

const COMPONENTS_ID = 'https://contract.check/components';
const COMPONENT_REF = '#/components/schemas/';

const isObjectSchema = (schema: Schema) => schema.type === 'object' || schema.properties !== undefined;

/**
 * The document's schema rewritten for Ajv: component references point into one shared bundle, and with `closed`
 * every documented object refuses undocumented fields (what the suite demands of responses; clients must ignore
 * unknown fields, so the document itself leaves objects open). `allOf` of objects (an extended schema) becomes
 * one closed object with the properties of all its parts.
 */
function prepare(schema: Schema, components: Record<string, Schema>, closed: boolean): Schema {
  const recurse = (s: Schema) => prepare(s, components, closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith(COMPONENT_REF)) {
    return { ...schema, $ref: `${COMPONENTS_ID}#/$defs/${schema.$ref.slice(COMPONENT_REF.length)}` };
  }
  const resolved = (s: Schema) => (typeof s.$ref === 'string' ? components[s.$ref.slice(COMPONENT_REF.length)] : s);
  if (closed && Array.isArray(schema.allOf) && schema.allOf.map(resolved).every(isObjectSchema)) {
    const { allOf, ...rest } = schema;
    const parts = (allOf as Schema[]).map(resolved);
    return recurse({
      ...rest,
      type: 'object',
      properties: Object.assign({}, ...parts.map((part) => part.properties ?? {})),
      required: [...new Set(parts.flatMap((part) => part.required ?? []))],
    });
  }
  const out: Schema = { ...schema };
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, Schema>).map(([k, v]) => [k, recurse(v)]));
  for (const key of ['items', 'not', 'additionalProperties', 'contains'] as const) {
    if (typeof schema[key] === 'object' && schema[key] !== null) out[key] = recurse(schema[key]);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    if (Array.isArray(schema[key])) out[key] = (schema[key] as Schema[]).map(recurse);
  }
  if (closed && isObjectSchema(schema) && schema.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

/** `x` as the integer `digits` / 10^`scale`, exactly as its shortest decimal form (what JSON carries) reads. */
function decimal(x: number) {
  const [mantissa, exponent = '0'] = String(Math.abs(x)).split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  const scale = fraction.length - Number(exponent);
  const digits = BigInt(whole + fraction);
  return scale >= 0 ? { digits, scale } : { digits: digits * 10n ** BigInt(-scale), scale: 0 };
}

/**
 * `multipleOf` on the numbers as written in JSON (0.07 is a multiple of 0.01), not on their binary floating-point
 * values: Ajv's own check divides and misses for amounts such as 642230.07.
 */
function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value)) return false;
  const [v, d] = [decimal(value), decimal(divisor)];
  const scale = Math.max(v.scale, d.scale);
  return (v.digits * 10n ** BigInt(scale - v.scale)) % (d.digits * 10n ** BigInt(scale - d.scale)) === 0n;
}

const describe = (at: string, error: ErrorObject) => {
  const where = `${at}${error.instancePath.replaceAll('/', '.')}`;
  if (error.keyword === 'additionalProperties') return `${where}.${(error.params as { additionalProperty: string }).additionalProperty}: undocumented field`;
  return `${where}: ${error.message} (${error.keyword} ${JSON.stringify(error.params)})`;
};

export function createSchemaChecker(doc: Doc, { closed }: { closed: boolean }): SchemaChecker {
  const components = doc.components?.schemas ?? {};
  // `example` is OpenAPI's annotation; union types (`["string", "null"]`) are how 3.1 documents say nullable.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: false });
  ajv.addKeyword('example');
  ajv.removeKeyword('multipleOf');
  ajv.addKeyword({ keyword: 'multipleOf', type: 'number', schemaType: 'number', validate: (divisor: number, value: number) => isMultipleOf(value, divisor) });
  addFormats(ajv);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: Object.fromEntries(Object.entries(components).map(([name, s]) => [name, prepare(s, components, closed)])) });
  const compiled = new WeakMap<Schema, ValidateFunction>();
  return {
    errors(schema, value, at = 'value') {
      let validate = compiled.get(schema);
      if (!validate) compiled.set(schema, (validate = ajv.compile(prepare(schema, components, closed))));
      return validate(value) ? [] : (validate.errors ?? []).map((error) => describe(at, error));
    },
  };
}
