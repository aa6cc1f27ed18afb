import fc from 'fast-check';
import type { Schema } from './json-schema';

// fast-check arbitraries from JSON Schema: the subset the OpenAPI document uses (type and union types, nullable,
// enum, const, minimum/maximum/exclusive bounds, multipleOf, minLength/maxLength, pattern, format date-time / date / email /
// uri, items, minItems/maxItems/uniqueItems, properties/required, anyOf/oneOf/allOf, not).
//
// `validValue` aims at values the schema accepts, `invalidValue` at values it refuses. Neither is trusted: the test
// judges every request with Ajv on the same schemas, so a generator that misses only shifts requests between the
// "valid" and "invalid" properties, and never makes either property wrong.

type Resolve = (schema: Schema) => Schema;
type Accepts = (schema: Schema, value: unknown) => boolean;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Generated strings and arrays stay short unless a bound asks for more (the bound itself is generated too). */
const SPAN = 40;

/** One code point per unit, so lengths are what JSON Schema counts: ASCII mostly, whitespace, anything else. */
const codePoint = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u3000', '\ufeff', '\u0000') },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

const typesOf = (schema: Schema): string[] => {
  const declared: string[] = schema.type === undefined ? [] : [].concat(schema.type);
  if (declared.length === 0) {
    if (schema.properties) declared.push('object');
    else if (schema.items) declared.push('array');
    else declared.push('string', 'integer', 'boolean', 'null');
  }
  return schema.nullable ? [...declared, 'null'] : declared;
};

/** Integers in [min, max]: most near min (small ids: the ones that exist), some anywhere, the bounds, 0 and ±1. */
function integerBetween(min: number, max: number): fc.Arbitrary<number> {
  const between = (lo: number, hi: number) => fc.bigInt({ min: BigInt(lo), max: BigInt(hi) }).map(Number);
  const special = [min, max, 0, 1, -1].filter((n) => n >= min && n <= max);
  return fc.oneof(
    { weight: 4, arbitrary: between(min, Math.min(max, min + 30)) },
    { weight: 2, arbitrary: between(min, max) },
    { weight: 1, arbitrary: fc.constantFrom(...special) },
  );
}

const boundsOf = (schema: Schema, fallback: number) => ({
  min: schema.exclusiveMinimum ?? schema.minimum ?? -fallback,
  max: schema.exclusiveMaximum ?? schema.maximum ?? fallback,
  minOpen: schema.exclusiveMinimum !== undefined,
  maxOpen: schema.exclusiveMaximum !== undefined,
});

/** The steps k of `multipleOf` (k × step) inside the bounds, as exact decimals when the step is 1/n (0.01 → k / 100). */
function steps(schema: Schema, step: number) {
  const perUnit = Math.round(1 / step);
  const exact = Math.abs(perUnit - 1 / step) < 1e-9;
  const toValue = (k: number) => (exact ? k / perUnit : k * step);
  const scaled = (x: number) => Math.round(x / step * 1e6) / 1e6;
  const { min, max, minOpen, maxOpen } = boundsOf(schema, MAX_SAFE * step);
  let lo = Math.ceil(scaled(min));
  let hi = Math.floor(scaled(max));
  if (minOpen && toValue(lo) <= min) lo++;
  if (maxOpen && toValue(hi) >= max) hi--;
  return { lo, hi, toValue };
}

function numberValue(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const step = schema.multipleOf ?? (integer ? 1 : undefined);
  if (step !== undefined) {
    const { lo, hi, toValue } = steps(schema, step);
    return integerBetween(lo, hi).map(toValue);
  }
  const { min, max } = boundsOf(schema, Number.MAX_VALUE);
  const open = (x: number) => x !== (schema.exclusiveMinimum ?? NaN) && x !== (schema.exclusiveMaximum ?? NaN);
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).filter(open);
}

function stringValue(schema: Schema): fc.Arbitrary<string> {
  const minLength: number = schema.minLength ?? 0;
  const maxLength: number = schema.maxLength ?? minLength + SPAN;
  const length = (s: string) => [...s].length;
  const fits = (s: string) => length(s) >= minLength && length(s) <= maxLength;
  const byFormat: Record<string, fc.Arbitrary<string>> = {
    'date-time': fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString()),
    date: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    email: fc.emailAddress(),
    uri: fc.webUrl(),
  };
  const loose = fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: codePoint, minLength, maxLength: Math.min(maxLength, minLength + SPAN) }) },
    { weight: 1, arbitrary: fc.string({ unit: codePoint, minLength: maxLength, maxLength }) },
  );
  if (schema.pattern === undefined) return (byFormat[schema.format] ?? loose).filter(fits);
  const pattern = new RegExp(schema.pattern, 'u');
  let matching: fc.Arbitrary<string> | undefined;
  try {
    matching = fc.stringMatching(pattern);
  } catch {
    // a construct fast-check cannot generate from: the loose strings that happen to match are all there is
  }
  const candidates = matching ? fc.oneof({ weight: 3, arbitrary: matching }, { weight: 1, arbitrary: loose }) : loose;
  return candidates.filter((s) => fits(s) && pattern.test(s));
}

function arrayValue(schema: Schema, item: fc.Arbitrary<unknown>): fc.Arbitrary<unknown[]> {
  const minLength: number = schema.minItems ?? 0;
  const maxLength: number = Math.min(schema.maxItems ?? minLength + 8, minLength + 8);
  return schema.uniqueItems
    ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
    : fc.array(item, { minLength, maxLength });
}

/** A property no value may have (`not: {}`: a field the operation refuses whatever it holds) is left out. */
const admitsNothing = (schema: Schema, resolve: Resolve) => {
  const not = resolve(schema).not;
  return not !== undefined && Object.keys(resolve(not)).length === 0;
};

function objectValue(schema: Schema, resolve: Resolve, accepts: Accepts): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>).filter(([, property]) => !admitsNothing(property, resolve));
  const model = Object.fromEntries(properties.map(([name, property]) => [name, validValue(property, resolve, accepts)]));
  return fc.record(model, { requiredKeys: (schema.required ?? []) as string[] });
}

/** Values `schema` should accept. */
export function validValue(schemaIn: Schema, resolve: Resolve, accepts: Accepts): fc.Arbitrary<unknown> {
  const schema = resolve(schemaIn);
  let value: fc.Arbitrary<unknown>;
  if ('const' in schema) value = fc.constant(schema.const);
  else if (schema.enum) value = fc.constantFrom(...(schema.enum as unknown[]));
  // An object whose properties are listed beside a oneOf (exactly one of two fields): its objects, kept when they pass.
  else if ((schema.anyOf || schema.oneOf) && schema.properties) value = objectValue(schema, resolve, accepts).filter((v) => accepts(schema, v));
  else if (schema.anyOf || schema.oneOf) value = fc.oneof(...((schema.anyOf ?? schema.oneOf) as Schema[]).map((s) => validValue(s, resolve, accepts)));
  else if (schema.allOf) {
    const parts = (schema.allOf as Schema[]).map(resolve);
    value = objectValue(
      { properties: Object.assign({}, ...parts.map((p) => p.properties)), required: parts.flatMap((p) => p.required ?? []) },
      resolve,
      accepts,
    );
  } else {
    const byType: Record<string, () => fc.Arbitrary<unknown>> = {
      null: () => fc.constant(null),
      boolean: () => fc.boolean(),
      integer: () => numberValue(schema, true),
      number: () => numberValue(schema, false),
      string: () => stringValue(schema),
      array: () => arrayValue(schema, validValue(schema.items ?? {}, resolve, accepts)),
      object: () => objectValue(schema, resolve, accepts),
    };
    value = fc.oneof(...typesOf(schema).map((type) => byType[type]()));
  }
  return schema.not ? value.filter((v) => !accepts(schema.not, v)) : value;
}

const OTHER_TYPES: Array<[type: string, value: unknown]> = [
  ['string', 'x'],
  ['string', '1'],
  ['integer', 7],
  ['number', 1.5],
  ['boolean', true],
  ['null', null],
  ['array', []],
  ['object', {}],
];

/**
 * A number written with more digits than a double holds, in range, that JSON.parse would round onto the schema's grid
 * (`1.999999999999999999` → 2, `3.0000000000000000001` → 3): the document's numbers are the values as written, so it
 * is off the grid, and the service must read it so (src/lib/exact-json.ts). Sent as written through JSON.rawJSON; Ajv
 * sees an object, not a number, and so calls it invalid too.
 */
function roundedOntoTheGrid(min: number | undefined, max: number | undefined, integer: boolean): unknown {
  const whole = Math.max(0, Math.ceil(min ?? 0));
  if (max !== undefined && whole + 1 > max) return undefined;
  const text = integer ? `${whole}.0000000000000000001` : `${whole}.999999999999999999`;
  return (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON(text);
}

/** Values `schema` should refuse: another type, just outside a bound, a broken pattern, a missing field... */
export function invalidValue(schemaIn: Schema, resolve: Resolve, accepts: Accepts): fc.Arbitrary<unknown> {
  const schema = resolve(schemaIn);
  const types = typesOf(schema);
  const candidates: Array<fc.Arbitrary<unknown>> = [];
  const wrongTypes = OTHER_TYPES.filter(([type, value]) => !types.includes(type) && !(type === 'integer' && types.includes('number')) && !accepts(schema, value));
  if (wrongTypes.length > 0) candidates.push(fc.constantFrom(...wrongTypes.map(([, value]) => value)));
  if (schema.enum || 'const' in schema) candidates.push(fc.constantFrom('not-documented', -1));
  if (schema.not) candidates.push(validValue(schema.not, resolve, accepts));
  if (types.includes('integer') || types.includes('number')) {
    const step = schema.multipleOf ?? (types.includes('integer') ? 1 : 0);
    const min = schema.exclusiveMinimum ?? schema.minimum;
    const max = schema.exclusiveMaximum ?? schema.maximum;
    const outside = [min === undefined ? undefined : min - (step || 1), max === undefined ? undefined : max + (step || 1)];
    if (step > 0) outside.push((min ?? 0) + step / 2);
    candidates.push(fc.constantFrom(...outside.filter((v) => v !== undefined)));
    const tooPrecise = step > 0 ? roundedOntoTheGrid(min, max, types.includes('integer')) : undefined;
    if (tooPrecise) candidates.push(fc.constant(tooPrecise));
  }
  if (types.includes('string')) {
    const near = ['', ' ', '\t', 'a\nb', '\r\n', '0@com', 'yesterday', 'x'.repeat((schema.maxLength ?? 300) + 1), 'x'.repeat(Math.max(0, (schema.minLength ?? 1) - 1))];
    candidates.push(fc.constantFrom(...near), fc.string({ unit: codePoint, maxLength: 12 }));
  }
  if (types.includes('array')) {
    const item = validValue(schema.items ?? {}, resolve, accepts);
    if (schema.maxItems !== undefined) candidates.push(item.map((v) => Array.from({ length: schema.maxItems + 1 }, (_, i) => (schema.uniqueItems && typeof v === 'number' ? v + i : v))));
    if (schema.uniqueItems) candidates.push(item.map((v) => [v, v]));
    candidates.push(fc.tuple(arrayValue(schema, item), invalidValue(schema.items ?? {}, resolve, accepts)).map(([valid, bad]) => [...valid, bad]));
  }
  if (types.includes('object')) {
    const required = (schema.required ?? []) as string[];
    const whole = objectValue(schema, resolve, accepts);
    if (required.length > 0) {
      candidates.push(fc.tuple(whole, fc.constantFrom(...required)).map(([object, name]) => Object.fromEntries(Object.entries(object).filter(([k]) => k !== name))));
    }
    const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
    if (properties.length > 0) {
      candidates.push(
        fc
          .constantFrom(...properties)
          .chain(([name, property]) => fc.tuple(whole, fc.constant(name), invalidValue(property, resolve, accepts)))
          .map(([object, name, bad]) => ({ ...object, [name]: bad })),
      );
    }
  }
  return candidates.length > 0 ? fc.oneof(...candidates) : fc.constant(undefined);
}
