/**
 * Collections (docs/api.md#collections): request and response schemas. The slug is derived from the
 * name on create and then kept, so queue paths and embeds stay valid when the name changes.
 */
import { Type } from 'typebox';
import { DEDUPE_MODES } from '../../lib/item-keys.ts';
import { COLLECTION_TYPES } from '../../store/collections.ts';
import { common, Id } from '../docs.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Kind = Type.Unsafe<string>({ type: 'string', enum: [...COLLECTION_TYPES] });
const Dedupe = Type.Unsafe<string>({
  type: 'string',
  enum: [...DEDUPE_MODES],
  description: 'What happens to a duplicate (docs/api.md#duplicates): off, url (same canonical URL) or url+text (or near-same text); url+text when created without it',
});

/** Upper bounds of retention (docs/api.md#retention): a hundred years, ten million items. */
export const RETENTION_LIMITS = { days: 36_500, maxItems: 10_000_000 } as const;
const Retention = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: RETENTION_LIMITS.days, description: 'items expire this many days after they arrived and were dated' })),
    maxItems: Type.Optional(Type.Integer({ minimum: 1, maximum: RETENTION_LIMITS.maxItems, description: 'at most this many items are kept, the newest by date' })),
  },
  {
    additionalProperties: false,
    description: 'How long items are kept (docs/api.md#retention): days and/or maxItems; {} keeps everything (the default). An update replaces the whole object',
  },
);

export const CollectionCreate = Type.Object({
  name: Name,
  contractId: Id,
  type: Type.Optional(Kind),
  filterId: Type.Optional(Id),
  active: Type.Optional(Type.Boolean()),
  dedupe: Type.Optional(Dedupe),
  retention: Type.Optional(Retention),
});
export const CollectionUpdate = Type.Object({
  name: Type.Optional(Name),
  type: Type.Optional(Kind),
  filterId: Type.Optional(Type.Union([Id, Type.Null()], { description: 'a filter set or chain id; null removes the filter' })),
  active: Type.Optional(Type.Boolean()),
  contractId: Type.Optional(Id),
  dedupe: Type.Optional(Dedupe),
  retention: Type.Optional(Retention),
});
export const Collection = Type.Object({ ...common, name: Type.String(), slug: Type.String(), type: Kind, filterId: Type.Optional(Id), dedupe: Dedupe, retention: Retention });
