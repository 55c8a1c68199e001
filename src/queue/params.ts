/**
 * Query parameters of the queue and content API (docs/api.md#read-parameters): their
 * schemas, limits and defaults, and the step from a validated query to an `ItemQuery`.
 */
import { Type } from 'typebox';
import { type Invalid, VALIDATION_CODES, validationError } from '../errors.ts';
import { ITEM_TYPES } from '../item.ts';
import { serviceRow } from '../services/table.ts';
import type { Circle, ItemQuery } from '../store/items.ts';

/** JSONP callback names (docs/api.md#jsonp). */
export const CALLBACK = '^[A-Za-z_$][A-Za-z0-9_$]*(\\.[A-Za-z_$][A-Za-z0-9_$]*)*$';

const Seconds = Type.Integer({ minimum: 0, maximum: 253_402_300_799 });
const common = {
  q: Type.String({ minLength: 1, maxLength: 200 }),
  callback: Type.Optional(Type.String({ pattern: CALLBACK, maxLength: 128 })),
  service: Type.Optional(Type.String({ maxLength: 200 })),
  type: Type.Optional(Type.String({ maxLength: 200 })),
  language: Type.Optional(Type.String({ maxLength: 200 })),
  location: Type.Optional(Type.String({ maxLength: 100 })),
  since: Type.Optional(Seconds),
  until: Type.Optional(Seconds),
  access_token: Type.Optional(Type.String()),
};
const paging = (maxCount: number) => ({
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: maxCount })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  order: Type.Optional(Type.Unsafe<'asc' | 'desc'>({ type: 'string', enum: ['asc', 'desc'] })),
  sort: Type.Optional(Type.Unsafe<'time' | 'kudos' | 'trending'>({ type: 'string', enum: ['time', 'kudos', 'trending'] })),
});

/** The longest search query, `text` or `search` (characters; docs/api.md#search). */
export const MAX_TEXT = 200;
/**
 * The moderator's additions to the queue read (docs/api.md): `state`, `pinned`, `text` and `held`. All accept ''
 * as absent, like every optional query parameter.
 */
const moderatorFilters = {
  state: Type.Optional(
    Type.Unsafe<'published' | 'unpublished' | 'removed' | ''>({ type: 'string', enum: ['published', 'unpublished', 'removed', ''], description: 'removed: the items removed at the source (docs/api.md#removed-at-the-source)' }),
  ),
  pinned: Type.Optional(Type.Unsafe<'true' | 'false' | ''>({ type: 'string', enum: ['true', 'false', ''], description: 'true: only the pinned items, in their order; false: only the others' })),
  text: Type.Optional(Type.String({ maxLength: MAX_TEXT })),
  held: Type.Optional(Type.Unsafe<'true' | 'false' | ''>({ type: 'string', enum: ['true', 'false', ''], description: 'true: only the items held for review (docs/filters.md#hold-for-review); false: only the others' })),
};
/** The content read's full-text search (docs/api.md#search); '' counts as absent. */
const contentSearch = {
  search: Type.Optional(Type.String({ maxLength: MAX_TEXT, description: 'Full-text search: words (all required), "a phrase", -excluded, prefix*; case and diacritics ignored. Without sort, most relevant first.' })),
};
export const QueueQuery = Type.Object({ ...common, ...paging(500), ...moderatorFilters });
export const ContentQuery = Type.Object({ ...common, ...paging(100), ...contentSearch });
export const CountQuery = Type.Object(common);
export const CollectionsQuery = Type.Object({ callback: common.callback });
/** Item ids: `<service>_<native id>` (docs/api.md, content items). */
const ItemId = Type.String({ minLength: 1, maxLength: 300 });
/** Most ids one bulk moderation takes (docs/api.md, PATCH /v1/queue/{contract}). */
export const MAX_BULK_IDS = 100;
/**
 * `id` names the one item of the single-item form; it may be left out only when the body has
 * `ids` (the bulk form); an empty `id` counts as absent. Which of the two was sent is checked by
 * `moderationTarget`.
 */
export const ModerationQuery = Type.Object({ q: common.q, id: Type.Optional(Type.String({ maxLength: 300 })), access_token: common.access_token });
/** Longest edited title and alternative text, and longest edited text (characters). */
export const MAX_EDIT_TITLE = 1000;
export const MAX_EDIT_TEXT = 50_000;
/** A moderator's edit of an item (docs/api.md#edit-an-item); null restores the source's. */
const ItemEditBody = Type.Union([
  Type.Object(
    {
      title: Type.Optional(Type.String({ maxLength: MAX_EDIT_TITLE })),
      text: Type.Optional(Type.String({ maxLength: MAX_EDIT_TEXT, description: 'HTML, served inert like collected text' })),
      media: Type.Optional(
        Type.Array(Type.Union([Type.Object({ alt: Type.Optional(Type.String({ maxLength: MAX_EDIT_TITLE })) }, { additionalProperties: false }), Type.Null()]), {
          maxItems: 100,
          description: "By the item's media order: each entry's alt replaces that medium's alternative text (null: unchanged)",
        }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export const ModerationBody = Type.Object({
  state: Type.Optional(Type.Unsafe<'published' | 'unpublished'>({ type: 'string', enum: ['published', 'unpublished'] })),
  ids: Type.Optional(Type.Array(ItemId, { minItems: 1, maxItems: MAX_BULK_IDS, description: `Bulk form: 1 to ${MAX_BULK_IDS} item ids, moderated all or none` })),
  pinned: Type.Optional(Type.Boolean({ description: 'Single-item form: pin (true) or unpin (false) the item (docs/api.md#pin-and-spotlight)' })),
  position: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: "With pinned true: the item's place among the pinned items, 1 = first" })),
  spotlight: Type.Optional(Type.Boolean({ description: 'Single-item form: the wall shows the item larger' })),
  edit: Type.Optional(ItemEditBody),
  article: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: "Single-item form: pin the item for this article's related content (GET /v1/related), first among its items; with pinned false, unpin it from the article (docs/api.md#related-content)" })),
});
export const SplitQuery = Type.Object({ q: common.q, id: Type.String({ minLength: 1, maxLength: 300, description: 'The card the duplicate was merged into' }), access_token: common.access_token });
export const HistoryQuery = Type.Object({ q: common.q, id: Type.String({ minLength: 1, maxLength: 300, description: 'The item whose moderation history is read' }), access_token: common.access_token });
export const SplitBody = Type.Object({ duplicateId: Type.String({ minLength: 1, maxLength: 300, description: 'The id of a duplicate listed in the card\'s duplicates' }) });
export const QueueCountQuery = Type.Object(common);
export const QueueStreamQuery = Type.Object({ q: common.q, access_token: common.access_token });
export const StreamQuery = Type.Object({
  q: common.q,
  display: Type.Optional(Type.Boolean({ description: "also `display` events: the collection's display state at once and at each change (the display page, docs/api.md#display-controls)" })),
});
export const ContractParams = Type.Object({ contract: Type.String({ minLength: 1, maxLength: 200 }) });

export interface ReadQuery {
  q: string;
  callback?: string;
  service?: string;
  type?: string;
  language?: string;
  location?: string;
  since?: number;
  until?: number;
  count?: number;
  offset?: number;
  order?: 'asc' | 'desc';
  sort?: 'time' | 'kudos' | 'trending';
  search?: string;
}

function list(value: string | undefined, name: string, allowed: (v: string) => boolean, invalid: Invalid[]): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  const values = value.split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);
  const bad = values.filter((v) => !allowed(v));
  if (bad.length) invalid.push({ propertyName: name, message: `${name} has unknown values: ${bad.join(', ')}`, propertyValue: value, code: VALIDATION_CODES.enum });
  return values;
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/**
 * `location=<longitude>,<latitude>,<radius>` (docs/api.md#location-parameter: the stated order,
 * with the geographic ranges longitude −180..180 and latitude −90..90; radius 10..200 meters).
 */
function circle(value: string | undefined, invalid: Invalid[]): Circle | undefined {
  if (value === undefined || value === '') return undefined;
  const parts = value.split(',').map((p) => p.trim());
  if (parts.length !== 3 || !parts.every((p) => NUMBER.test(p))) {
    invalid.push({ propertyName: 'location', message: 'location must be <longitude>,<latitude>,<radius> (three numbers)', propertyValue: value, code: VALIDATION_CODES.format });
    return undefined;
  }
  const [longitude, latitude, radius] = parts.map(Number) as [number, number, number];
  const range = (ok: boolean, what: string) => {
    if (!ok) invalid.push({ propertyName: 'location', message: `location ${what}`, propertyValue: value, code: VALIDATION_CODES.range });
    return ok;
  };
  const ok =
    range(longitude >= -180 && longitude <= 180, 'longitude must be between -180 and 180') &&
    range(latitude >= -90 && latitude <= 90, 'latitude must be between -90 and 90') &&
    range(radius >= 10 && radius <= 200, 'radius must be between 10 and 200 meters');
  return ok ? { longitude, latitude, radius } : undefined;
}

/**
 * The item selection of a read: `since` defaults to now − 24 h and `until` to now (Unix
 * seconds, docs/api.md#read-parameters); comma lists checked against the known values. Throws 400
 * naming the parameter.
 */
export function itemQuery(collectionId: string, query: ReadQuery, now = Date.now()): ItemQuery {
  const invalid: Invalid[] = [];
  const services = list(query.service, 'service', (v) => serviceRow(v) !== undefined, invalid);
  const types = list(query.type, 'type', (v) => (ITEM_TYPES as readonly string[]).includes(v), invalid);
  const languages = list(query.language, 'language', (v) => /^[a-z]{2}$/.test(v), invalid);
  const location = circle(query.location, invalid);
  const sinceMs = query.since !== undefined ? query.since * 1000 : now - 24 * 3600 * 1000;
  const untilMs = query.until !== undefined ? query.until * 1000 : now;
  if (query.since !== undefined && query.until !== undefined && query.since > query.until) {
    invalid.push({ propertyName: 'since', message: 'since must not be after until', propertyValue: query.since, code: VALIDATION_CODES.range });
  }
  if (invalid.length) throw validationError(invalid);
  return {
    collectionId,
    sinceMs,
    untilMs,
    ...(services ? { services } : {}),
    ...(types ? { types } : {}),
    ...(languages ? { languages } : {}),
    ...(location ? { location } : {}),
  };
}

/** A moderation body (`ModerationBody`) as validated. */
export interface ModerationRequest {
  state?: 'published' | 'unpublished';
  ids?: string[];
  pinned?: boolean;
  position?: number;
  spotlight?: boolean;
  edit?: { title?: string; text?: string; media?: ({ alt?: string } | null)[] } | null;
  article?: string;
}

/**
 * What a moderation body asks beyond its target (docs/api.md, PATCH /v1/queue/{contract}): a state,
 * a pin, a spotlight, an edit, or several of them for one item. Throws 400 naming the property:
 * `state` when it asks nothing, `position` without `pinned` true, `edit` when it edits nothing,
 * and a pin, spotlight or edit in the bulk form (`ids`), which moderates states only.
 */
export function checkModeration(body: ModerationRequest, bulk: boolean): void {
  const invalid: Invalid[] = [];
  const asked = ['state', 'pinned', 'spotlight', 'edit'].filter((name) => body[name as keyof ModerationRequest] !== undefined);
  if (!asked.length) invalid.push({ propertyName: 'state', message: 'state is required (or pinned, spotlight or edit)', code: VALIDATION_CODES.required });
  if (body.position !== undefined && body.pinned !== true) invalid.push({ propertyName: 'position', message: 'position goes with pinned: true', propertyValue: body.position, code: VALIDATION_CODES.format });
  if (body.edit && body.edit.title === undefined && body.edit.text === undefined && body.edit.media === undefined) {
    invalid.push({ propertyName: 'edit', message: 'edit needs title, text or media (null restores the original)', code: VALIDATION_CODES.required });
  }
  if (bulk) {
    for (const name of ['pinned', 'position', 'spotlight', 'edit'] as const) {
      if (body[name] !== undefined) invalid.push({ propertyName: name, message: `${name} applies to one item: give the query parameter id, not ids`, code: VALIDATION_CODES.format });
    }
  }
  if (invalid.length) throw validationError(invalid);
}

/**
 * The items a moderation names (docs/api.md, PATCH /v1/queue/{contract}): the query's `id` (the
 * single-item form, answered with the item) or the body's `ids`, duplicates dropped (the bulk
 * form, answered with the items). Throws 400 naming `id` when neither is given (as before the bulk
 * form existed) and naming `ids` when both are.
 */
export function moderationTarget(id: string | undefined, ids: string[] | undefined): { bulk: boolean; ids: string[] } {

  if (id !== undefined && id !== '' && ids !== undefined) {
    throw validationError([{ propertyName: 'ids', message: 'give either the query parameter id or the body property ids, not both', propertyValue: ids.join(','), code: VALIDATION_CODES.format }]);
  }
  if (ids !== undefined) return { bulk: true, ids: [...new Set(ids)] };
  if (id === undefined || id === '') throw validationError([{ propertyName: 'id', message: 'id is required (or ids in the body)', code: VALIDATION_CODES.required }]);
  return { bulk: false, ids: [id] };
}
