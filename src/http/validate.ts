/**
 * Request validation at the edge (docs/api.md#errors): JSON Schemas (TypeBox) compiled by Ajv, and
 * Ajv's errors turned into the interface's error entries, one per offending property, with
 * `propertyName` as a path (`rules[2].operator`, `[3].service`).
 *
 * Bodies are validated strictly (no type coercion); query strings and path parameters are
 * coerced from their text. Unknown properties are removed, never an error (issue: "unknown
 * fields ignored").
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Static, TSchema, TUnsafe } from 'typebox';
import { type Invalid, VALIDATION_CODES, validationError } from '../errors.ts';

const common = { allErrors: true, removeAdditional: 'all' as const, useDefaults: true, strict: false };
const bodies = new Ajv({ ...common, coerceTypes: false });
const texts = new Ajv({ ...common, coerceTypes: 'array' as const });

/**
 * Marks a route schema the handler validates itself (with `check`/`problems`, after
 * authentication, naming each element of a bulk body): it documents the route in OpenAPI, and
 * `compileFor` accepts anything for it.
 */
export const HANDLER_VALIDATED = 'x-validated-by-handler';

const accept = (() => true) as unknown as ValidateFunction;

/**
 * `schema` marked as validated by the handler (`HANDLER_VALIDATED`): documented in OpenAPI, not
 * compiled by Fastify. Its static type is `unknown`, so a typed handler must check the value.
 */
export function handlerValidated(schema: TSchema): TUnsafe<unknown> {
  return { ...schema, [HANDLER_VALIDATED]: true } as unknown as TUnsafe<unknown>;
}

/** Compiles a schema for one part of a request (`body` strict; others coerced). */
export function compileFor(part: string | undefined, schema: object): ValidateFunction {
  if ((schema as Record<string, unknown>)[HANDLER_VALIDATED] === true) return accept;
  return (part === 'body' ? bodies : texts).compile(schema);
}

/**
 * Removes the query parameters given empty (`callback=`, `since=`): an empty parameter is the
 * parameter absent, on every route (docs/api.md#empty-parameters; the interface makes JSONP
 * "given and non-empty"), so a default applies and a required one is reported missing. A
 * repeated parameter keeps its non-empty values. Changes `query` in place.
 */
export function dropEmpty(query: unknown): void {
  if (query === null || typeof query !== 'object') return;
  const params = query as Record<string, unknown>;
  for (const [name, value] of Object.entries(params)) {
    if (value === '') delete params[name];
    else if (Array.isArray(value)) {
      const given = value.filter((v) => v !== '');
      if (given.length === 0) delete params[name];
      else if (given.length === 1) params[name] = given[0];
      else if (given.length !== value.length) params[name] = given;
    }
  }
}

/** Applies `dropEmpty` to every request's query before validation, on every route. */
export function installEmptyQueryAsAbsent(app: { addHook(name: 'preValidation', hook: (request: { query: unknown }) => Promise<void>): unknown }): void {
  app.addHook('preValidation', async (request) => dropEmpty(request.query));
}

function path(instancePath: string, prefix: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = prefix;
  for (const part of parts) out += /^\d+$/.test(part) ? `[${part}]` : out ? `.${part}` : part;
  return out;
}

function codeOf(keyword: string): number {
  if (keyword === 'required') return VALIDATION_CODES.required;
  if (['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems'].includes(keyword)) {
    return VALIDATION_CODES.range;
  }
  if (['enum', 'const', 'anyOf', 'oneOf'].includes(keyword)) return VALIDATION_CODES.enum;
  if (['format', 'pattern'].includes(keyword)) return VALIDATION_CODES.format;
  return VALIDATION_CODES.type;
}

function valueAt(data: unknown, instancePath: string): unknown {
  let value = data;
  for (const part of instancePath.split('/').slice(1)) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return value;
}

/** Ajv errors → one `Invalid` per property (the first error of each), paths prefixed. */
export function toInvalid(errors: ErrorObject[], data: unknown, prefix = ''): Invalid[] {
  const seen = new Map<string, Invalid>();
  for (const error of errors) {
    const missing = error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty : undefined;
    const propertyName = missing ? path(`${error.instancePath}/${missing}`, prefix) : path(error.instancePath, prefix);
    if (seen.has(propertyName)) continue;
    const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
    seen.set(propertyName, {
      propertyName: propertyName || '(body)',
      message: missing
        ? `${propertyName} is required`
        : `${propertyName || 'body'} ${allowed ? `must be one of ${allowed.join(', ')}` : error.message}`,
      propertyValue: missing ? undefined : valueAt(data, error.instancePath),
      code: codeOf(error.keyword),
    });
  }
  return [...seen.values()];
}

const cache = new WeakMap<object, ValidateFunction>();

/**
 * The offending properties of `value` against `schema` (strict, as a body), paths prefixed;
 * empty when valid. Removes unknown properties and applies defaults in place.
 */
export function problems(schema: TSchema, value: unknown, prefix = ''): Invalid[] {
  let validate = cache.get(schema);
  if (!validate) cache.set(schema, (validate = bodies.compile(schema)));
  return validate(value) ? [] : toInvalid(validate.errors ?? [], value, prefix);
}

/**
 * Whether `value` is valid against `schema` (strict, as a body; as `problems`), adding its
 * problems, paths prefixed, to `invalid` when it is not.
 */
export function isValid<S extends TSchema>(schema: S, value: unknown, invalid: Invalid[], prefix = ''): value is Static<S> {
  const found = problems(schema, value, prefix);
  invalid.push(...found);
  return found.length === 0;
}

/**
 * Validates `value` against `schema` strictly (as a body) and returns it typed, with unknown
 * properties removed and defaults applied; throws a 400 ValidationError naming each property.
 */
export function check<S extends TSchema>(schema: S, value: unknown, prefix = ''): Static<S> {
  const invalid = problems(schema, value, prefix);
  if (invalid.length) throw validationError(invalid);
  return value as Static<S>;
}
