/**
 * Collections (docs/api.md#collections): request and response schemas. The slug is derived from the
 * name on create and then kept, so queue paths and embeds stay valid when the name changes.
 */
import { Type } from 'typebox';
import { HEX_COLOUR } from '../../lib/contrast.ts';
import { DEDUPE_MODES } from '../../lib/item-keys.ts';
import { CARD_STYLES, DISPLAY_LIMITS, DISPLAY_MODES, DISPLAY_STATES, PUBLICATION_TYPES, RADIUS_RANGE, THEME_COLOURS, THEME_FONTS } from '../../lib/publication-settings.ts';
import { COLLECTION_TYPES } from '../../store/collections.ts';
import { common, Id } from '../schemas.ts';

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

const enumOf = (values: readonly string[], description: string) => Type.Unsafe<string>({ type: 'string', enum: [...values], description });
const Url = (description: string) => Type.String({ minLength: 1, maxLength: 2000, description: `${description}; an absolute https URL` });
const Colour = (description: string) => Type.String({ pattern: HEX_COLOUR.source, description: `${description}: #rgb or #rrggbb` });
const COLOUR_USES: Record<(typeof THEME_COLOURS)[number], string> = {
  background: 'the page behind the cards',
  card: 'cards, the overlay and buttons',
  text: 'text on cards',
  muted: 'secondary text (times, handles, sites) and notes on the page',
  accent: 'links, kudos, avatars, buttons and the focus outline',
  accentText: 'text on the accent colour (avatars, buttons)',
  badgeText: 'text of the source badges; muted unless set',
  badgeBackground: 'the source badges; background unless set',
};
const Theme = Type.Object(
  {
    ...Object.fromEntries(THEME_COLOURS.map((name) => [name, Type.Optional(Colour(COLOUR_USES[name]))])),
    font: Type.Optional(enumOf(Object.keys(THEME_FONTS), 'system (default), sans, serif, rounded or mono: a font stack of fonts every system has')),
    cardStyle: Type.Optional(enumOf(CARD_STYLES, 'shadow (default), flat or outline')),
    radius: Type.Optional(Type.Integer({ ...RADIUS_RANGE, description: 'corner radius of cards in CSS pixels; default 14' })),
  },
  {
    additionalProperties: false,
    description:
      "The wall's look (docs/api.md#publication-settings). Every pair of colours the wall draws text with must meet WCAG 2.2 AA contrast (4.5:1, 3:1 for large text and the focus outline), else 400 naming the pair",
  },
);
const { dwellSeconds, perSlide, pinnedEvery } = DISPLAY_LIMITS;
const Display = Type.Object(
  {
    mode: Type.Optional(enumOf(DISPLAY_MODES, 'wall (default: masonry that scrolls by itself), carousel (a few items at a time) or ticker (a moving row)')),
    dwellSeconds: Type.Optional(Type.Integer({ minimum: dwellSeconds.minimum, maximum: dwellSeconds.maximum, description: `seconds each carousel slide stays; default ${dwellSeconds.default}` })),
    perSlide: Type.Optional(Type.Integer({ minimum: perSlide.minimum, maximum: perSlide.maximum, description: `items on each carousel slide; default ${perSlide.default}` })),
    shuffle: Type.Optional(Type.Boolean({ description: 'items in a random order instead of newest first; default false' })),
    header: Type.Optional(Type.String({ minLength: 1, maxLength: DISPLAY_LIMITS.header.maxLength, description: "the header's text, e.g. the event's hashtag or title; default the collection's name" })),
    qrUrl: Type.Optional(Type.String({ minLength: 1, maxLength: DISPLAY_LIMITS.qrUrl.maxLength, description: 'the URL of the QR code in the header (none without it); an absolute https URL' })),
    pinnedEvery: Type.Optional(Type.Integer({ minimum: pinnedEvery.minimum, maximum: pinnedEvery.maximum, description: 'a pinned item returns after every this many other items (carousel and ticker); none without it' })),
  },
  { additionalProperties: false, description: 'The display page for event screens (docs/api.md#display-page)' },
);
/** What the collection's event screens show (docs/api.md#display-controls). */
export const DisplayStateSchema = Type.Unsafe<string>({ type: 'string', enum: [...DISPLAY_STATES], description: 'live (items), paused (hold what is shown) or blank (a holding card, no item)' });
/** The body of `POST /collection/collections/{id}/display`. */
export const DisplayControl = Type.Object({ state: DisplayStateSchema }, { additionalProperties: false });

/** The publication settings of a collection (docs/api.md#publication-settings); `settingsProblems` checks what the schema cannot. */
export const Publication = Type.Object(
  {
    type: Type.Optional(enumOf(PUBLICATION_TYPES, 'the wall when the page or embed names no layout: grid (default), vertical, horizontal or fullPage')),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 35, description: "BCP 47 language tag of the wall's own words and relative times, e.g. en (default), nl, pt-BR" })),
    autoScroll: Type.Optional(Type.Boolean({ description: 'the wall scrolls by itself, sideways when horizontal, else down; pauses on hover, focus and its pause button; default false' })),
    fullscreenLink: Type.Optional(Url('a button on the wall opens this page in a new tab')),
    fullscreenText: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: "the fullscreen button's text; default \"Full screen\" in the wall's language" })),
    fullPage: Type.Optional(
      Type.Object(
        {
          backgroundImage: Type.Optional(Url('picture behind the full page')),
          backgroundAttribution: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "the picture's credit, shown at the foot of the page" })),
          logo: Type.Optional(Url('logo in the header of the full page')),
        },
        { additionalProperties: false, description: 'Branding of the fullPage type' },
      ),
    ),
    theme: Type.Optional(Theme),
    display: Type.Optional(Display),
  },
  {
    additionalProperties: false,
    description: 'How the wall of the collection looks and behaves (docs/api.md#publication-settings); {} is the default wall. An update that sends it replaces the whole object. Always shown',
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
  publication: Type.Optional(Publication),
});
export const CollectionUpdate = Type.Object({
  name: Type.Optional(Name),
  type: Type.Optional(Kind),
  filterId: Type.Optional(Type.Union([Id, Type.Null()], { description: 'a filter set or chain id; null removes the filter' })),
  active: Type.Optional(Type.Boolean()),
  contractId: Type.Optional(Id),
  dedupe: Type.Optional(Dedupe),
  retention: Type.Optional(Retention),
  publication: Type.Optional(Publication),
});
export const Collection = Type.Object({ ...common, name: Type.String(), slug: Type.String(), type: Kind, filterId: Type.Optional(Id), dedupe: Dedupe, retention: Retention, publication: Publication, displayState: DisplayStateSchema });
