/**
 * fast-check arbitraries from the JSON Schemas of an OpenAPI 3.1 document (the subset TypeBox
 * emits for Sluice's routes: `type` string, integer, number, boolean, null, array, object;
 * `enum`, `const`, `anyOf`/`oneOf`, `pattern`, `format: date-time`, length, size and range
 * bounds, `$ref` to `#/components/schemas/…`), for the fuzz test of every operation.
 *
 * `valid(schema, name)` generates values the schema accepts, preferring, for a property or
 * parameter `name` that has known values (ids and slugs of seeded resources: `hints`), one of
 * those, so that requests reach the handlers and not only the validation. `invalid(schema)`
 * generates values the schema most likely refuses: wrong types, out-of-range numbers, strings
 * that break the pattern or the length, hostile text.
 */
import fc, { type Arbitrary } from 'fast-check';

export type Schema = Record<string, any>;

/** Known values by property or parameter name (`contractId`, `id`, `q`, …). */
export type Hints = Record<string, readonly unknown[]>;

/** Text that has hurt parsers, routers and databases before. */
const HOSTILE = [
  '',
  ' ',
  '0',
  '-1',
  'null',
  'true',
  '[]',
  '{}',
  '%00',
  '\u0000',
  '../../etc/passwd',
  "' or 1=1 --",
  '<script>alert(1)</script>',
  '${7*7}',
  '😀',
  '\ud800',
  'a'.repeat(201),
  'é'.repeat(1000),
  '9'.repeat(400),
  '1e400',
  'NaN',
  '0x10',
  '2026-02-30T25:61:00Z',
  '__proto__',
  'constructor',
];

export function schemaArbitraries(document: Schema, hints: Hints) {
  const resolve = (schema: Schema): Schema => {
    let current = schema;
    for (let depth = 0; current && typeof current.$ref === 'string' && depth < 10; depth++) {
      const name = current.$ref.replace(/^#\/components\/schemas\//, '');
      current = document.components.schemas[name];
    }
    return current ?? {};
  };

  const types = (schema: Schema): string[] => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);

  function string(schema: Schema): Arbitrary<string> {
    const min = schema.minLength ?? 0;
    const max = Math.min(schema.maxLength ?? 40, Math.max(min, 40));
    if (schema.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString());
    if (typeof schema.pattern === 'string') {
      const limit = schema.maxLength ?? Infinity;
      return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= limit);
    }
    const plain = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789 -_.'.split(''));
    const any = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 });
    return fc.string({ minLength: min, maxLength: max, unit: fc.oneof({ weight: 4, arbitrary: plain }, { weight: 1, arbitrary: any }) });
  }

  function number(schema: Schema, integer: boolean): Arbitrary<number> {
    const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 1e-9) : -1e9);
    const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 1e-9) : 1e9);
    return integer
      ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
      : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  }

  function valid(input: Schema, name?: string, depth = 0): Arbitrary<unknown> {
    const schema = resolve(input);
    const known = name !== undefined ? hints[name] : undefined;
    const own = validOwn(schema, depth);
    return known && known.length > 0 ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: own }) : own;
  }

  function validOwn(schema: Schema, depth: number): Arbitrary<unknown> {
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s: Schema) => valid(s, undefined, depth + 1)));
    const [type] = types(schema);
    switch (type) {
      case 'string':
        return string(schema);
      case 'integer':
        return number(schema, true);
      case 'number':
        return number(schema, false);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return fc.array(depth > 4 ? fc.constant(null) : valid(schema.items ?? {}, undefined, depth + 1), {
          minLength: schema.minItems ?? 0,
          maxLength: Math.min(schema.maxItems ?? 4, Math.max(schema.minItems ?? 0, 4)),
        });
      case 'object':
        return object(schema, depth);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  function object(schema: Schema, depth: number): Arbitrary<Record<string, unknown>> {
    const properties: Record<string, Schema> = schema.properties ?? {};
    const required: string[] = schema.required ?? [];
    const model: Record<string, Arbitrary<unknown>> = {};
    for (const [key, property] of Object.entries(properties)) model[key] = valid(property, key, depth + 1);
    // Required properties with a default (`not` of a rule) may be left out: the server fills them in.
    const requiredKeys = required.filter((key) => key in model && !('default' in resolve(properties[key]!)));
    return fc.record(model, { requiredKeys });
  }

  /** A value of another kind, or one just past a bound, or hostile text. */
  function invalid(input: Schema): Arbitrary<unknown> {
    const schema = resolve(input);
    const [type] = types(schema);
    const options: Arbitrary<unknown>[] = [fc.constantFrom(...HOSTILE), fc.jsonValue({ maxDepth: 3 })];
    if (type === 'string' || schema.pattern) {
      options.push(fc.string({ maxLength: 30, unit: 'binary' }));
      if (schema.maxLength !== undefined) options.push(fc.constant('x'.repeat(schema.maxLength + 1)));
      if (schema.minLength) options.push(fc.constant(''));
      options.push(fc.integer(), fc.boolean(), fc.constant(null));
    }
    if (type === 'integer' || type === 'number') {
      if (schema.minimum !== undefined) options.push(fc.constant(schema.minimum - 1));
      if (schema.maximum !== undefined) options.push(fc.constant(schema.maximum + 1));
      options.push(fc.double(), fc.constant(1.5), fc.string({ maxLength: 8 }));
    }
    if (type === 'array') {
      options.push(fc.constant({}), fc.string({ maxLength: 8 }));
      if (schema.maxItems !== undefined && schema.maxItems <= 2000) options.push(fc.constant(Array.from({ length: schema.maxItems + 1 }, () => 'x')));
    }
    if (type === 'object') {
      options.push(fc.constant([]), fc.string({ maxLength: 8 }), object(schema, 0).chain((value) => mutateObject(schema, value)));
    }
    if (Array.isArray(schema.enum)) options.push(fc.string({ maxLength: 12 }));
    return fc.oneof(...options);
  }

  /** `value` (valid for `schema`) with one property dropped, or given an invalid value. */
  function mutateObject(schema: Schema, value: Record<string, unknown>): Arbitrary<Record<string, unknown>> {
    const keys = Object.keys(schema.properties ?? {});
    if (keys.length === 0) return fc.constant(value);
    return fc.constantFrom(...keys).chain((key) =>
      fc.oneof(
        fc.constant(Object.fromEntries(Object.entries(value).filter(([k]) => k !== key))),
        invalid(schema.properties[key]).map((bad) => ({ ...value, [key]: bad })),
      ),
    );
  }

  return { resolve, valid, invalid, mutateObject };
}
