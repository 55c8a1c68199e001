/**
 * Request and response schemas of the inputs endpoints (docs/api.md#inputs, docs/services.md),
 * and the rules a schema cannot say: which types each service has, location fields only (and
 * always) for type `location`, and the form of `input` per service (the last two from the
 * service table, `services/table.ts`).
 */
import { Type, type Static } from 'typebox';
import { type Invalid, VALIDATION_CODES } from '../../errors.ts';
import { SERVICE_NAMES, serviceRow } from '../../services/table.ts';

const Id = Type.String({ pattern: '^[0-9a-f]{24}$' });

/** What every input body has: the source (required) and the optional settings. */
const source = {
  service: Type.Unsafe<string>({ type: 'string', enum: SERVICE_NAMES }),
  type: Type.String({ minLength: 1, maxLength: 32 }),
  input: Type.String({ minLength: 1, maxLength: 2048 }),
};
const settings = {
  filterId: Type.Optional(Id),
  credentialId: Type.Optional(Id),
  latitude: Type.Optional(Type.Number({ minimum: -90, maximum: 90 })),
  longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
  radius: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 50_000 })),
  display: Type.Optional(Type.Boolean()),
  active: Type.Optional(Type.Boolean()),
  interval: Type.Optional(Type.Integer({ minimum: 1, description: "seconds between two polls of this input, within the operator's POLL_INTERVAL_MIN–POLL_INTERVAL_MAX (docs/configuration.md#collector); absent: the service's interval" })),
};

/** POST body: contract and collection required (docs/api.md#inputs). */
export const InputCreate = Type.Object({ ...source, contractId: Id, collectionId: Id, ...settings });
export type InputCreate = Static<typeof InputCreate>;

/** PUT body: the source required, the rest replaced by what is sent or its default (docs/api.md#record-operations). */
export const InputReplace = Type.Object({ ...source, contractId: Type.Optional(Id), collectionId: Type.Optional(Id), ...settings });
export type InputReplace = Static<typeof InputReplace>;

export const InputListQuery = Type.Object({
  contract_id: Id,
  collection_id: Type.Optional(Id),
  access_token: Type.Optional(Type.String()),
});

export const IdParams = Type.Object({ id: Id });

/** Create and replace query: the token, and `force` (docs/api.md#inputs, "Duplicates"). */
export const ForceQuery = Type.Object({
  access_token: Type.Optional(Type.String()),
  force: Type.Optional(Type.Boolean({ description: 'true: store the input even when its collection already has its source (otherwise 409 naming `input`)' })),
});

/** Seconds between two polls now of one input (docs/api.md#poll-now; 429 with Retry-After sooner). */
export const POLL_NOW_EVERY_S = 10;

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
/** One warning of a poll (`services/connector.ts` `PollWarning`). */
const PollWarning = Type.Object({
  code: Type.Union([Type.Literal('dropped'), Type.Literal('undated')], { description: 'dropped: entries left out; undated: entries dated by the feed or the poll' }),
  count: Type.Integer({ minimum: 1, description: 'how many entries, in that poll' }),
  message: Type.String(),
});
/** The input of a response (docs/api.md#inputs; `status`: docs/api.md#input-status). */
export const Input = Type.Object({
  _id: Id,
  ...source,
  contractId: Id,
  collectionId: Id,
  ...settings,
  display: Type.Boolean(),
  active: Type.Boolean(),
  created: Type.String({ format: 'date-time' }),
  createdBy: Type.String(),
  lastModified: Type.String({ format: 'date-time' }),
  lastModifiedBy: Type.String(),
  title: Type.Optional(Type.String({ description: "read-only: the feed's or account's own title as its last successful poll read it (a feed's <title>); absent until known. Changing the input's source removes it" })),
  status: Type.Object({
    lastRun: Time, lastSuccess: Time, lastError: Type.Union([Type.String(), Type.Null()]), nextRun: Time, collected: Type.Integer(), rejected: Type.Integer(),
    warnings: Type.Array(PollWarning, { description: "what the last successful poll dropped or made up (docs/api.md#input-status)" }),
    feed: Type.Object(
      {
        mode: Type.Union([Type.Literal('poll'), Type.Literal('push'), Type.Literal('stream')], { description: 'poll: fetched on a schedule; push: WebSub notifications; stream: a live connection (Mastodon streaming, Bluesky Jetstream)' }),
        since: Type.String({ format: 'date-time' }),
        lastEvent: Time,
      },
      { description: 'how the input is fed, since when, and when the last pushed or streamed event arrived (docs/api.md#input-status)' },
    ),
  }),
});

/** The answer of `POST /collection/inputs/{id}/poll` (docs/api.md#poll-now). */
export const PollResult = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('error')], { description: 'ok: the source answered and was read; error: it failed (`error` says why)' }),
  items: Type.Integer({ minimum: 0, description: 'new items this poll stored (0 when the source has nothing new, or failed)' }),
  title: Type.Union([Type.String(), Type.Null()], { description: "the source's own title, as the input's `title`; null until known" }),
  error: Type.Union([Type.String(), Type.Null()], { description: "why the poll failed, as the input's `status.lastError` (e.g. `HTTP 404`, `not a feed: …`, a timeout); null on success" }),
  input: Input,
});

/** The fields of an input body that only type `location` has, and always has (`docs/api.md#inputs`). */
export const LOCATION_FIELDS = ['latitude', 'longitude', 'radius'] as const;

/** Most inputs a bulk create may hold (`docs/api.md#limits`). */
export const MAX_BULK_INPUTS = 1000;

/**
 * The body fields an input of `type` needs besides `service` and `type`: `input`, and for type
 * `location` the circle (`LOCATION_FIELDS`). `GET /collection/services` and `inputRules` both
 * read it, so the console's form asks for what the validation requires.
 */
export function fieldsOf(type: string): string[] {
  return type === 'location' ? ['input', ...LOCATION_FIELDS] : ['input'];
}

/**
 * The rules of docs/api.md#inputs and docs/services.md beyond the schema, for one input body;
 * `limits` the operator's interval range (POLL_INTERVAL_MIN, POLL_INTERVAL_MAX, s); `prefix` is
 * the element path (`[3]`) for bulk bodies; `allowPrivateFetch` (ALLOW_PRIVATE_FETCH) admits the
 * forms that name a local server (docs/services.md#mastodon). Returns the offending properties
 * (empty when valid).
 */
export function inputRules(body: InputReplace, limits: { min: number; max: number }, prefix = '', allowPrivateFetch = false): Invalid[] {
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const invalid: Invalid[] = [];
  const service = serviceRow(body.service);
  const types = service?.types ?? [];
  if (!types.includes(body.type)) {
    invalid.push({
      propertyName: at('type'),
      message: `type must be one of ${types.join(', ')} for service ${body.service}`,
      propertyValue: body.type,
      code: VALIDATION_CODES.enum,
    });
  }
  for (const name of LOCATION_FIELDS) {
    if (body.type === 'location' && body[name] === undefined) {
      invalid.push({ propertyName: at(name), message: `${name} is required for type location`, code: VALIDATION_CODES.required });
    } else if (body.type !== 'location' && body[name] !== undefined) {
      invalid.push({ propertyName: at(name), message: `${name} is only allowed for type location`, propertyValue: body[name], code: VALIDATION_CODES.type });
    }
  }
  if (body.interval !== undefined && (body.interval < limits.min || body.interval > limits.max)) {
    invalid.push({ propertyName: at('interval'), message: `interval must be between ${limits.min} and ${limits.max} seconds`, propertyValue: body.interval, code: VALIDATION_CODES.range });
  }
  const problem = service?.checkInput?.(body.input, { allowPrivateFetch, type: body.type });
  if (problem) invalid.push({ propertyName: at('input'), message: problem, propertyValue: body.input, code: VALIDATION_CODES.format });
  return invalid;
}
