/**
 * Service credentials (docs/api.md#credentials): request and response schemas, and the fields of
 * each service, from the service table (`services/table.ts`): its `credentials` (secret or not) plus,
 * for the Graph API services, the token's `expiresAt`. A body field the service does not have →
 * 400 naming it; on create every secret field of the service is required.
 */
import { Type } from 'typebox';
import { type Invalid, VALIDATION_CODES } from '../../errors.ts';
import { SERVICE_NAMES, serviceRow } from '../../services/table.ts';
import { common, Id } from '../schemas.ts';

/** The services that read credentials (rss needs none). */
export const CREDENTIAL_SERVICES = SERVICE_NAMES.filter((service) => Object.keys(serviceRow(service)!.credentials).length > 0);

/** The fields of `service`'s credential: name → secret or not. */
export function credentialFields(service: string): Record<string, boolean> {
  const row = serviceRow(service);
  const fields: Record<string, boolean> = Object.fromEntries(Object.entries(row?.credentials ?? {}).map(([name, { secret }]) => [name, secret]));
  if (row?.credentialExpires) fields.expiresAt = false;
  return fields;
}

/** Every non-secret field of any service (declared on the response, so that nothing else is serialized). */
const PLAIN_FIELDS = [...new Set(CREDENTIAL_SERVICES.flatMap((service) => Object.entries(credentialFields(service)).filter(([, secret]) => !secret).map(([name]) => name)))];

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Service = Type.Unsafe<string>({ type: 'string', enum: CREDENTIAL_SERVICES });
const Value = Type.String({ minLength: 1, maxLength: 4096 });
/** The fields every body may have; the service's own fields come beside them. */
const BASE = ['name', 'contractId', 'service', 'default', 'active'];
/**
 * Any other property is a string (pattern properties, so that body validation keeps them for
 * `credentialRules` to judge against the service instead of dropping them as unknown).
 */
const OTHERS = { [`^(?!(?:${BASE.join('|')})$)`]: Value };

export const CredentialCreate = Type.Object(
  { name: Name, contractId: Id, service: Service, default: Type.Optional(Type.Boolean()), active: Type.Optional(Type.Boolean()) },
  { patternProperties: OTHERS, description: "plus the service's fields (docs/api.md#credentials)" },
);
export const CredentialUpdate = Type.Object(
  { name: Type.Optional(Name), contractId: Type.Optional(Id), service: Type.Optional(Service), default: Type.Optional(Type.Boolean()), active: Type.Optional(Type.Boolean()) },
  { patternProperties: OTHERS },
);

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
/** The service's quota counted against a credential (docs/api.md#quotas); absent for a service without one. */
export const Quota = Type.Object({
  name: Type.String({ description: 'instagram-hashtags, youtube-units or twitter-posts' }),
  used: Type.Integer(),
  limit: Type.Integer(),
  resetsAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the count next falls: the end of the day or month; for Instagram when the oldest hashtag frees up (null when none counts)' }),
});
export const Credential = Type.Object({
  ...common,
  name: Type.String(),
  service: Service,
  default: Type.Boolean(),
  ...Object.fromEntries(PLAIN_FIELDS.map((name) => [name, Type.Optional(Type.String())])),
  hints: Type.Record(Type.String(), Type.String(), { description: 'per secret field, a masked hint: its last 4 characters when it is long enough' }),
  connectedBy: Type.Object({ id: Type.String(), name: Type.String(), date: Type.String({ format: 'date-time' }) }),
  health: Type.Object({
    status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]),
    lastUsed: Time,
    lastError: Type.Union([Type.String(), Type.Null()]),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the access token expires (null: it does not, or is not known); one with a refresh token is refreshed ahead of it' }),
  }),
  quota: Type.Optional(Quota),
});

/**
 * The rules beyond the schema for a body of `service`: each field the service does not have (400
 * naming it), on create (`creating`) each missing secret field, and an `expiresAt` that is not a date.
 */
export function credentialRules(body: Record<string, unknown>, service: string, creating: boolean): Invalid[] {
  const fields = credentialFields(service);
  const invalid: Invalid[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (BASE.includes(name)) continue;
    if (!Object.hasOwn(fields, name)) {
      const known = Object.keys(fields).join(', ');
      invalid.push({ propertyName: name, message: `${name} is not a field of a ${service} credential (its fields: ${known})`, code: VALIDATION_CODES.format });
    } else if (name === 'expiresAt' && Number.isNaN(Date.parse(String(value)))) {
      invalid.push({ propertyName: name, message: 'expiresAt must be an ISO 8601 date-time', propertyValue: value, code: VALIDATION_CODES.format });
    }
  }
  if (creating) {
    for (const name of requiredFields(service)) {
      if (body[name] === undefined) invalid.push({ propertyName: name, message: `${name} is required for a ${service} credential`, code: VALIDATION_CODES.required });
    }
  }
  return invalid;
}

/**
 * The secret fields a credential of `service` must have on create: those the service cannot work
 * without; for a service whose every secret is optional (mastodon), all of them (a credential
 * with no secret would be no credential).
 */
function requiredFields(service: string): string[] {
  const secrets = Object.entries(serviceRow(service)?.credentials ?? {}).filter(([, credential]) => credential.secret);
  const needed = secrets.filter(([, credential]) => !credential.optional);
  return (needed.length ? needed : secrets).map(([name]) => name);
}

export { hintOf } from '../../store/credentials.ts';
