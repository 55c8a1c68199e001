/**
 * Table types of the database, shared by SQLite and PostgreSQL through Kysely. Column names are
 * snake_case in SQL and camelCase here (CamelCasePlugin). Booleans are stored as integers 0/1
 * and times of records as ISO 8601 text; times the code compares (schedules, expiry, item
 * dates) are integers in ms since the epoch.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** The common record fields of interface §2.1 (without `_id`, `contractId` and `active`). */
interface Audited {
  created: string;
  createdBy: string;
  lastModified: string;
  lastModifiedBy: string;
}

export interface ContractTable extends Audited {
  id: string;
  name: string;
  slug: string;
  filterId: string | null;
  active: number;
}

export interface CollectionTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  slug: string;
  type: string;
  filterId: string | null;
  active: number;
}

export interface ConsumerTable {
  id: string;
  /** `user` or `client` (interface §2.11 consumer_type). */
  type: string;
  name: string;
  email: string | null;
  language: string | null;
  username: string | null;
  passwordHash: string | null;
  clientId: string | null;
  secretHash: string | null;
  /** JSON array of registered redirect URIs. */
  redirectUris: string;
  created: string;
}

export interface GrantTable {
  consumerId: string;
  contractId: string;
  created: string;
}

export interface TokenTable {
  /** SHA-256 of the token, hex; the token itself is never stored. */
  tokenHash: string;
  /** `access` or `refresh`. */
  kind: string;
  consumerId: string;
  /** Tokens issued from one grant share a family; reuse of a rotated refresh token revokes it. */
  family: string;
  expiresAt: number;
  revoked: number;
  createdAt: number;
}

export interface InputTable extends Audited {
  id: string;
  contractId: string;
  collectionId: string;
  service: string;
  type: string;
  input: string;
  filterId: string | null;
  latitude: number | null;
  longitude: number | null;
  radius: number | null;
  display: number;
  active: number;
  /** JSON object the connector keeps between polls (validators, cursors). */
  sourceState: string;
  lastRun: string | null;
  lastSuccess: string | null;
  lastError: string | null;
  nextRunAt: number;
  failures: number;
  collected: number;
  rejected: number;
}

export interface ItemTable {
  collectionId: string;
  id: string;
  contractId: string;
  inputId: string;
  service: string;
  type: string;
  state: string;
  /** The item's `date` in ms since the epoch, for since/until and sorting. */
  dateMs: number;
  score: number;
  language: string | null;
  /** The content item of interface §2.8 as JSON, without `state`. */
  body: string;
  createdAt: number;
}

/** A customization of a contract's publication (interface §2.7): `type` is `css` or `js`. */
export interface CustomizationTable extends Audited {
  id: string;
  contractId: string;
  name: string;
  type: string;
  data: string;
  version: string;
  description: string | null;
  active: number;
}

export interface Database {
  contracts: ContractTable;
  collections: CollectionTable;
  consumers: ConsumerTable;
  grants: GrantTable;
  tokens: TokenTable;
  inputs: InputTable;
  items: ItemTable;
  customizations: CustomizationTable;
}

export type ContractRow = Selectable<ContractTable>;
export type CollectionRow = Selectable<CollectionTable>;
export type ConsumerRow = Selectable<ConsumerTable>;
export type TokenRow = Selectable<TokenTable>;
export type InputRow = Selectable<InputTable>;
export type NewInput = Insertable<InputTable>;
export type InputUpdate = Updateable<InputTable>;
export type ItemRow = Selectable<ItemTable>;
export type CustomizationRow = Selectable<CustomizationTable>;
export type { Generated };
