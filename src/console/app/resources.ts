/**
 * The management API's records as the console reads them (docs/api.md#collections,
 * docs/api.md#inputs, docs/api.md#input-status, docs/api.md#credentials,
 * docs/api.md#services): one declaration each, for every screen.
 */

/** A collection (`GET /collection/collections`). */
export interface Collection {
  _id: string;
  name: string;
  slug: string;
  type: string;
  contractId: string;
  active: boolean;
  filterId?: string;
  /** How long its items are kept (docs/api.md#retention); {} keeps everything. */
  retention?: { days?: number; maxItems?: number };
}

/** A warning of an input's last successful poll (`status.warnings`). */
export interface Warning {
  code: string;
  count: number;
  message: string;
}

/** How an input is fed (`status.feed`): its mode, since when, the last pushed or streamed event. */
export interface Feed {
  mode: 'poll' | 'push' | 'stream';
  since: string;
  lastEvent: string | null;
}

/** An input (`GET /collection/inputs`), with its status. */
export interface Input {
  _id: string;
  service: string;
  type: string;
  input: string;
  contractId: string;
  collectionId: string;
  filterId?: string;
  /** The contract's credential it uses; absent: the contract's default for its service. */
  credentialId?: string;
  latitude?: number;
  longitude?: number;
  radius?: number;
  display: boolean;
  active: boolean;
  status: { lastRun: string | null; lastSuccess: string | null; lastError: string | null; nextRun: string | null; collected: number; rejected: number; warnings?: Warning[]; feed?: Feed };
}

/**
 * A quota of a credential, when its service has one (docs/api.md#credentials): what was used of
 * `limit` in the current period, which ends at `resetsAt` (ISO 8601, or null for a sliding window).
 */
export interface Quota {
  name: string;
  used: number;
  limit: number;
  resetsAt?: string | null;
}

/**
 * A credential (`GET /collection/credentials`): a contract's own account at a service. Secrets
 * are never returned: `hints` has a masked hint per secret field; the service's non-secret
 * fields (`userId`, `identifier`, `expiresAt`…) are beside the common ones.
 */
export interface Credential {
  _id: string;
  name: string;
  contractId: string;
  service: string;
  default: boolean;
  active: boolean;
  hints: Record<string, string>;
  connectedBy: { id: string; name: string; date: string };
  health: { status: 'ok' | 'failed'; lastUsed: string | null; lastError: string | null; expiresAt?: string | null };
  /** One quota or several, when the service counts one (read as given). */
  quota?: Quota | Quota[];
  created: string;
  lastModified: string;
  [field: string]: unknown;
}

/** A field of a service's credential as `GET /collection/services` names it (`secret`: never shown again). */
export interface CredentialField {
  name: string;
  secret: boolean;
  /** The service works without it (not required). */
  optional?: boolean;
}

/** An entry of `GET /collection/services` (docs/api.md#services). */
export interface ServiceEntry {
  service: string;
  types: { type: string; fields: string[] }[];
  /** The environment variables of the installation's own credential. */
  credentials: { variable: string; configured: boolean }[];
  configured: boolean;
  /** The fields of a contract's own credential of the service, in the order to ask for them. */
  credentialFields?: CredentialField[];
  /** The installation's own credential's quota, when contracts share it. */
  quota?: Quota;
  [more: string]: unknown;
}
