/**
 * Customizations (docs/api.md#customizations, docs/api.md#limits): request and response schemas
 * (an optional `collectionId` narrows a customization to one collection's walls), the 256 KiB limit of `data` (UTF-8 bytes), and the version rule: when an update does not send
 * `version`, the last run of digits is incremented ("1"→"2", "1.9"→"1.10"; no digits → ".1").
 */
import { Type } from 'typebox';
import { type Invalid, VALIDATION_CODES } from '../../errors.ts';
import { common, ContractQuery, Id, ID_PATTERN, TokenQuery } from '../schemas.ts';

/** Largest `data`, in UTF-8 bytes (docs/api.md#limits). */
export const MAX_DATA_BYTES = 256 * 1024;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Kind = Type.Unsafe<string>({ type: 'string', enum: ['css', 'js'] });
const Data = Type.String({ maxLength: MAX_DATA_BYTES, description: 'CSS or JavaScript, at most 256 KiB' });
const Version = Type.String({ minLength: 1, maxLength: 50 });
const Description = Type.String({ maxLength: 2000 });
const CollectionId = Type.String({ pattern: ID_PATTERN, description: "a collection of the customization's contract: only its walls get the customization (absent: every wall of the contract)" });

export const CustomizationCreate = Type.Object({
  name: Name,
  contractId: Id,
  type: Kind,
  data: Data,
  version: Type.Optional(Version),
  description: Type.Optional(Description),
  active: Type.Optional(Type.Boolean()),
  collectionId: Type.Optional(CollectionId),
});
export const CustomizationUpdate = Type.Object({
  name: Type.Optional(Name),
  version: Type.Optional(Version),
  data: Type.Optional(Data),
  description: Type.Optional(Description),
  active: Type.Optional(Type.Boolean()),
  contractId: Type.Optional(Id),
  type: Type.Optional(Kind),
  collectionId: Type.Optional(Type.Union([Id, Type.Null()], { description: 'a collection of the contract: only its walls get the customization; null: every wall of the contract' })),
});
export const Customization = Type.Object({
  ...common,
  name: Type.String(),
  type: Kind,
  data: Type.String(),
  version: Type.String(),
  description: Type.Optional(Type.String()),
  collectionId: Type.Optional(CollectionId),
});
/** The list's query (docs/api.md#customizations): the contract, and optionally one collection's customizations. */
export const CustomizationListQuery = Type.Object({
  ...ContractQuery.properties,
  collection_id: Type.Optional(Type.String({ pattern: ID_PATTERN, description: "only the customizations of this collection of the contract (not the contract-wide ones)" })),
});

/** An earlier state of a customization (docs/api.md#customization-versions). */
export const CustomizationVersion = Type.Object({
  _id: Id,
  customizationId: Id,
  contractId: Id,
  name: Type.String(),
  type: Kind,
  data: Type.String(),
  version: Type.String(),
  description: Type.Optional(Type.String()),
  active: Type.Boolean(),
  collectionId: Type.Optional(CollectionId),
  lastModified: Type.String({ format: 'date-time', description: 'when this state was saved' }),
  lastModifiedBy: Type.String({ description: 'who saved this state' }),
  replaced: Type.String({ format: 'date-time', description: 'when an update replaced this state' }),
  replacedBy: Type.String({ description: 'who sent that update' }),
});
/** Paging of the versions list: newest first, `count` (1–100, default 20) from `offset`. */
export const VersionsQuery = Type.Object({
  ...TokenQuery.properties,
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

/** The next version after `version` (docs/api.md#customizations). */
export function nextVersion(version: string): string {
  const match = /(\d+)(?!.*\d)/.exec(version);
  if (!match) return `${version}.1`;
  const next = (BigInt(match[1]!) + 1n).toString();
  return version.slice(0, match.index) + next + version.slice(match.index + match[1]!.length);
}

/** The rule the schema cannot say: `data` at most MAX_DATA_BYTES bytes as UTF-8 (256 KiB); empty when it holds. */
export function dataProblems(body: Record<string, unknown>): Invalid[] {
  const data = body.data as string | undefined;
  if (data === undefined || Buffer.byteLength(data, 'utf8') <= MAX_DATA_BYTES) return [];
  return [{ propertyName: 'data', message: `data must be at most ${MAX_DATA_BYTES} bytes`, code: VALIDATION_CODES.range }];
}
