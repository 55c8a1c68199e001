/**
 * Which credential an input's poll uses (docs/api.md#credentials), resolved in the collector so
 * that a connector receives the settings exactly as it receives the environment's:
 *
 *   1. the credential the input names (`credentialId`): of the input's contract and service, active;
 *   2. else the contract's default credential for the service;
 *   3. else the installation-wide one from the environment, when SHARED_CREDENTIALS is true;
 *   4. else none: the service's credential settings are unset, and a permanent failure of the
 *      connector then says what to connect (`missingCredential`).
 *
 * One contract never uses another's credential: the lookups carry the input's contract. Each poll
 * reads the credential row (cheap); its secret is decrypted again only when its `lastModified` or
 * its sealed value changed (cached per process and database handle, as `filter-cache.ts` does for
 * filters). A connected credential whose token is about to expire is refreshed first
 * (`token-refresh.ts`, docs/api.md#connecting-an-account).
 */
import { currentSecretKey, open } from '../lib/secret-box.ts';
import { SERVICES, type Service, type ServiceRow, type ServiceSettings } from '../services/table.ts';
import { defaultCredential, findCredential } from '../store/credentials.ts';
import type { Db } from '../store/db.ts';
import type { CredentialRow } from '../store/tables.ts';
import { SourceError, type SourceFetch } from '../services/connector.ts';
import { createTokenRefresher, type RefreshSettings } from './token-refresh.ts';

/** The settings a poll runs with, and the credential they came from (none: the environment's or nothing). */
export interface Resolved {
  services: ServiceSettings;
  credential?: CredentialRow;
  /** No credential at all: the contract must connect one (SHARED_CREDENTIALS=false). */
  missing: boolean;
}

export interface CredentialResolver {
  /**
   * `poll.fetch`: the poll's guarded fetch, with which a token about to expire is refreshed first
   * (`token-refresh.ts`); without it, no refresh.
   */
  resolve(input: { contractId: string; service: string; credentialId?: string | null }, poll?: { fetch: SourceFetch; now: number }): Promise<Resolved>;
}

/** What the resolver reads of the configuration. */
export interface CredentialSettings extends RefreshSettings {
  secretKey: string | undefined;
  dataDir: string;
  sharedCredentials: boolean;
  services: ServiceSettings;
}

/** At most this many decrypted credentials are kept per database (oldest dropped first). */
const MAX_ENTRIES = 1000;

/** The resolver of the module's rules for `db`, with its cache of decrypted credentials and its token refresher. */
export function createCredentialResolver(db: Db, settings: CredentialSettings): CredentialResolver {
  const cache = new Map<string, { lastModified: string; secret: string; values: Record<string, string> }>();
  const refresher = createTokenRefresher(db, settings);

  function valuesOf(row: CredentialRow): Record<string, string> {
    const cached = cache.get(row.id);
    // A refresh changes the sealed secret, not lastModified.
    if (cached?.lastModified === row.lastModified && cached.secret === row.secret) return cached.values;
    const values = { ...(JSON.parse(row.settings) as Record<string, string>), ...(JSON.parse(open(currentSecretKey(settings), row.secret)) as Record<string, string>) };
    cache.delete(row.id);
    cache.set(row.id, { lastModified: row.lastModified, secret: row.secret, values });
    if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    return values;
  }

  /** The environment's settings with the service's credentials replaced by `values` (unset when absent). */
  function withCredentials(service: Service, values: Record<string, string>): ServiceSettings {
    const fields = Object.keys((SERVICES[service] as ServiceRow).credentials);
    const own = { ...settings.services[service] } as Record<string, string | undefined>;
    for (const field of fields) own[field] = values[field];
    return { ...settings.services, [service]: own };
  }

  return {
    async resolve(input, poll) {
      const service = input.service as Service;
      const row = SERVICES[service] as ServiceRow | undefined;
      if (!row || Object.keys(row.credentials).length === 0) return { services: settings.services, missing: false };
      let credential: CredentialRow | undefined;
      if (input.credentialId) {
        credential = await findCredential(db, input.contractId, input.credentialId);
        if (!credential || credential.service !== service) {
          throw new SourceError(`credential ${input.credentialId} named by the input no longer exists: name another in credentialId or remove it`, { permanent: true });
        }
        if (credential.active !== 1) throw new SourceError(`credential ${credential.id} (${credential.name}) is inactive: activate it or name another`, { permanent: true });
      } else {
        credential = await defaultCredential(db, input.contractId, service);
      }
      if (credential) credential = await refresher.fresh(credential, poll?.fetch, poll?.now);
      if (credential) return { services: withCredentials(service, valuesOf(credential)), credential, missing: false };
      if (settings.sharedCredentials) return { services: settings.services, missing: false };
      // A service that works without any (mastodon's optional token) misses nothing.
      return { services: withCredentials(service, {}), missing: Object.values(row.credentials).some((field) => !field.optional) };
    },
  };
}

const resolvers = new WeakMap<Db, CredentialResolver>();

/** The process-wide resolver of `db` (one per database handle). */
export function credentialResolver(db: Db, settings: CredentialSettings): CredentialResolver {
  let resolver = resolvers.get(db);
  if (!resolver) resolvers.set(db, (resolver = createCredentialResolver(db, settings)));
  return resolver;
}

/** The message of a permanent failure of an input of `contractId` that has no credential for `service`. */
export function missingCredential(service: string, contractId: string, failure: string): string {
  return `connect a ${service} credential to contract ${contractId} (POST /collection/credentials) or name one in the input's credentialId (${failure})`;
}

/**
 * Whether a permanent failure is the credential's fault (refused, revoked, expired, not allowed),
 * not the input's (unknown user, bad input): the connectors' messages of HTTP 401/403 and of the
 * services' token and key errors.
 */
export function isCredentialFailure(message: string): boolean {
  return /\bHTTP 40[13]\b|unauthori[sz]ed|forbidden|invalid (?:access |bearer |oauth )?token|access[ _]token|api key|authori[sz]ation failed|expired|permission|not permitted|login failed|password|authenticat|OAuthException/i.test(message);
}

/**
 * Whether a poll's failure (`error`, recorded as `message`) is its credential's fault: what the
 * connector says (`SourceError.credential`) when it says it, else what the message reads as
 * (`isCredentialFailure`). A failure the connector puts on the input never marks the credential,
 * whatever words the input's text brings into the message.
 */
export function blamesCredential(error: unknown, message: string): boolean {
  return error instanceof SourceError && error.credential !== undefined ? error.credential : isCredentialFailure(message);
}

/** A credential's `lastUsed` is written at most this often (ms), so that polls stay cheap. */
export const LAST_USED_EVERY_MS = 60_000;
