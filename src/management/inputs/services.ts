/**
 * `GET /collection/services` on {api_url} (`docs/api.md#services`): the service table
 * (`src/services/table.ts`) as clients need it to build an input: per service, its input types with the
 * body fields each needs (`fieldsOf`), and its credentials, each with whether this installation
 * has it set. Values are never sent, only the environment variable names and `configured`. Also,
 * per service, the fields of a credential a contract connects (`credentialFields`: name, secret
 * or not; POST /collection/credentials, docs/api.md#credentials), and, when contracts share the
 * installation's own credential (SHARED_CREDENTIALS) and it is set, its quota (docs/api.md#quotas).
 *
 *   200 [{service: "twitter",
 *         types: [{type: "user", fields: ["input"]}, …, {type: "location", fields: ["input", "latitude", "longitude", "radius"]}],
 *         credentials: [{variable: "TWITTER_BEARER_TOKEN", configured: false}],
 *         configured: false,
 *         credentialFields: [{name: "bearerToken", secret: true}]}, …]
 *
 * In the table's order. Any valid access token may read it (the table is the same for every
 * contract); without one → 401.
 */
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { authenticate } from '../../http/authenticate.ts';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { SERVICE_NAMES, SERVICES, type ServiceRow } from '../../services/table.ts';
import type { Db } from '../../store/db.ts';
import { TokenQuery } from '../schemas.ts';
import { ENVIRONMENT, quotaOf } from '../../store/quotas.ts';
import { serviceModule } from '../../services/index.ts';
import { quotaAt } from '../../services/module.ts';
import { credentialFields, Quota } from '../credentials/schema.ts';
import { fieldsOf } from './schema.ts';

/** One entry of `GET /collection/services` (OpenAPI). */
export const ServiceEntry = Type.Object({
  service: Type.String({ description: 'the `service` of an input' }),
  types: Type.Array(
    Type.Object({
      type: Type.String({ description: 'the `type` of an input' }),
      fields: Type.Array(Type.String(), { description: 'the body fields an input of this type needs besides service and type' }),
    }),
  ),
  credentials: Type.Array(
    Type.Object({
      variable: Type.String({ description: 'the environment variable that holds it' }),
      configured: Type.Boolean({ description: 'whether this installation has it set' }),
    }),
  ),
  configured: Type.Boolean({ description: 'every credential the service needs is set (true for a service that needs none; optional ones do not count); when false, some or all types collect nothing' }),
  credentialFields: Type.Array(
    Type.Object({
      name: Type.String({ description: 'a field of a credential of the service (POST /collection/credentials)' }),
      secret: Type.Boolean({ description: 'whether it is a secret: required on create, never returned' }),
    }),
    { description: 'what a contract sends to connect its own credential of the service; empty for a service that needs none' },
  ),
  /** The quota of the installation's own credential, when contracts share it (SHARED_CREDENTIALS) and it is set. */
  quota: Type.Optional(Quota),
});

/** The entries of the service table for `settings` (the installation's configuration). */
export function serviceEntries(settings: Config['services']) {
  return SERVICE_NAMES.map((service) => {
    const row: ServiceRow = SERVICES[service];
    const values = settings[service] as Record<string, string | undefined>;
    const credentials = Object.entries(row.credentials).map(([key, credential]) => ({ variable: credential.variable, configured: Boolean(values[key]) }));
    return {
      service,
      types: row.types.map((type) => ({ type, fields: fieldsOf(type) })),
      credentials,
      configured: Object.entries(row.credentials).every(([key, credential]) => credential.optional || Boolean(values[key])),
      credentialFields: Object.entries(credentialFields(service)).map(([name, secret]) => ({ name, secret })),
    };
  });
}

/** Registers the module's routes on `app` (see the module's description). */
export function serviceRoutes(app: App, { db, config }: { db: Db; config: Config }): void {
  const entries = serviceEntries(config.services);
  /** The installation's credential's quota of each configured service, when contracts share it. */
  const withQuotas = (now: number) =>
    Promise.all(entries.map(async (entry) => {
      const quota = config.sharedCredentials && entry.configured && entry.credentials.length ? await quotaOf(db, quotaAt(serviceModule(entry.service)?.quota, config.quotas, now), ENVIRONMENT, now) : undefined;
      return quota ? { ...entry, quota } : entry;
    }));
  app.get(
    '/collection/services',
    { schema: { tags: ['inputs'], security: TOKEN_SECURITY, querystring: TokenQuery, response: { 200: Type.Array(ServiceEntry), ...errorResponses(400, 401) } } },
    async (request) => {
      await authenticate(db, request);
      return withQuotas(Date.now());
    },
  );
}
