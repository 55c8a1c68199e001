/**
 * A collection's publication settings (docs/api.md#publication-settings): the rules the management
 * API enforces and the wall applies, in one place below both (pure functions).
 *
 * After the properties of the original service's publications: a `type` (vertical, horizontal,
 * grid or full page), `language`, `autoScroll`, a fullscreen button (`fullscreenLink`,
 * `fullscreenText`) and the full page's `backgroundImage`, `backgroundAttribution` and `logo`;
 * and a `theme` (colours, font, card style, corner radius) that must keep every text of the wall
 * readable: each pair of colours the wall draws text (or a focus outline) with meets WCAG 2.2 AA
 * (contrast.ts; 4.5:1 for text, 3:1 for large text and non-text parts).
 */
import type { Invalid } from '../errors.ts';
import { AA_MINIMUM, contrastRatio } from './contrast.ts';

/** The wall's types (`layout` of the page); `grid` when the settings name none. */
export const PUBLICATION_TYPES = ['grid', 'vertical', 'horizontal', 'fullPage'] as const;
export type PublicationType = (typeof PUBLICATION_TYPES)[number];

/** The theme's colours, each `#rgb` or `#rrggbb`. */
export const THEME_COLOURS = ['background', 'card', 'text', 'muted', 'accent', 'accentText', 'badgeText', 'badgeBackground'] as const;
export type ThemeColour = (typeof THEME_COLOURS)[number];

/** The theme's fonts: CSS font stacks of fonts every system has (no web font is loaded). */
export const THEME_FONTS = {
  system: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  sans: '"Helvetica Neue", Helvetica, Arial, "Liberation Sans", sans-serif',
  serif: 'Georgia, Cambria, "Times New Roman", "Liberation Serif", serif',
  rounded: 'ui-rounded, "SF Pro Rounded", "Nunito", system-ui, sans-serif',
  mono: 'ui-monospace, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace',
} as const;
export type ThemeFont = keyof typeof THEME_FONTS;

/** How cards stand out from the background: a soft shadow (default), nothing, or a 1 px outline. */
export const CARD_STYLES = ['shadow', 'flat', 'outline'] as const;
export type CardStyle = (typeof CARD_STYLES)[number];

/** Corner radius of cards, in CSS pixels. */
export const RADIUS_RANGE = { minimum: 0, maximum: 32 } as const;

export interface Theme extends Partial<Record<ThemeColour, string>> {
  font?: ThemeFont;
  cardStyle?: CardStyle;
  radius?: number;
}

/** What a collection's event screens show (docs/api.md#display-controls): items, items held still, or a holding card without items. */
export const DISPLAY_STATES = ['live', 'paused', 'blank'] as const;
export type DisplayState = (typeof DISPLAY_STATES)[number];

/** The display page's modes (docs/api.md#display-page): a self-scrolling masonry wall, a carousel, a ticker. */
export const DISPLAY_MODES = ['wall', 'carousel', 'ticker'] as const;
export type DisplayMode = (typeof DISPLAY_MODES)[number];

/** Bounds of the display settings: seconds a carousel slide stays, items per slide, items between two returns of a pinned item, characters. */
export const DISPLAY_LIMITS = {
  dwellSeconds: { minimum: 2, maximum: 300, default: 8 },
  perSlide: { minimum: 1, maximum: 4, default: 1 },
  pinnedEvery: { minimum: 1, maximum: 100 },
  header: { maxLength: 100 },
  /** A QR code of a longer URL gets too dense to scan from across a room. */
  qrUrl: { maxLength: 500 },
} as const;

/** The display page's settings (docs/api.md#display-page). */
export interface DisplaySettings {
  mode?: DisplayMode;
  /** Seconds each carousel slide stays. */
  dwellSeconds?: number;
  /** Items on each carousel slide. */
  perSlide?: number;
  /** Items are shown in a random order instead of newest first. */
  shuffle?: boolean;
  /** The header's text: the event's hashtag or title (default: the collection's name). */
  header?: string;
  /** The URL the header's QR code holds (https). */
  qrUrl?: string;
  /** A pinned item returns after every this many other items (carousel and ticker). */
  pinnedEvery?: number;
}

export interface PublicationSettings {
  type?: PublicationType;
  /** BCP 47 language tag (canonical form) of the wall's own words and relative times. */
  language?: string;
  /** The wall scrolls by itself along its axis: sideways when horizontal, else down. */
  autoScroll?: boolean;
  fullscreenLink?: string;
  fullscreenText?: string;
  fullPage?: { backgroundImage?: string; backgroundAttribution?: string; logo?: string };
  theme?: Theme;
  display?: DisplaySettings;
}

/** The wall's default colours (wall.css); `badgeText` and `badgeBackground` follow `muted` and `background` unless set. */
export const DEFAULT_COLOURS: Record<ThemeColour, string> = {
  background: '#f4f5f7',
  card: '#ffffff',
  text: '#1c1e21',
  muted: '#65676b',
  accent: '#4f46e5',
  accentText: '#ffffff',
  badgeText: '#65676b',
  badgeBackground: '#f4f5f7',
};

/** The colour another one takes when not set. */
const DERIVED: Partial<Record<ThemeColour, ThemeColour>> = { badgeText: 'muted', badgeBackground: 'background' };

/** A theme with every property: unset colours from `DEFAULT_COLOURS` (or the colour they follow), `system` font, `shadow` cards, 14 px corners. */
export function resolveTheme(theme: Theme = {}): Required<Theme> & Record<ThemeColour, string> {
  const colours = {} as Record<ThemeColour, string>;
  for (const name of THEME_COLOURS) {
    const from = DERIVED[name];
    colours[name] = (theme[name] ?? (from ? theme[from] : undefined) ?? DEFAULT_COLOURS[name]).toLowerCase();
  }
  return { ...colours, font: theme.font ?? 'system', cardStyle: theme.cardStyle ?? 'shadow', radius: theme.radius ?? 14 };
}

/**
 * Every pair of colours the wall puts one on the other (wall.css), with its WCAG 2.2 AA minimum:
 * text 4.5:1 (1.4.3) — the source badges' text too, which is small (11 px); large text 3:1 (the
 * full page's title, 28 px bold); the focus outline 3:1 against the page (1.4.11).
 */
export const CONTRAST_PAIRS: readonly { foreground: ThemeColour; background: ThemeColour; minimum: number; shows: string }[] = [
  { foreground: 'text', background: 'card', minimum: AA_MINIMUM.text, shows: 'the text of cards' },
  { foreground: 'muted', background: 'card', minimum: AA_MINIMUM.text, shows: 'times, handles and sites on cards' },
  { foreground: 'accent', background: 'card', minimum: AA_MINIMUM.text, shows: 'links and kudos on cards' },
  { foreground: 'accentText', background: 'accent', minimum: AA_MINIMUM.text, shows: 'avatars and buttons' },
  { foreground: 'badgeText', background: 'badgeBackground', minimum: AA_MINIMUM.text, shows: 'the source badges' },
  { foreground: 'muted', background: 'background', minimum: AA_MINIMUM.text, shows: 'notes on the page (empty wall, attribution)' },
  { foreground: 'text', background: 'background', minimum: AA_MINIMUM.large, shows: "the full page's title and buttons' outlines (large text)" },
  { foreground: 'accent', background: 'background', minimum: AA_MINIMUM.nonText, shows: 'focus outlines (non-text)' },
];

/** The ratio with two decimals, rounded down so that a shown "4.50:1" never hides a 4.499. */
const shown = (ratio: number) => `${(Math.floor(ratio * 100) / 100).toFixed(2)}:1`;

/**
 * The contrast problems of `theme` as the wall would draw it (`resolveTheme`), one per pair of
 * `CONTRAST_PAIRS` below its minimum, code 1003. Each names a property the request set: the
 * pair's foreground if set, else its background, else the colour an unset one follows. Colours
 * must already be valid `#rgb` / `#rrggbb` (the schema's pattern).
 */
export function themeProblems(theme: Theme, prefix = 'publication.theme'): Invalid[] {
  const resolved = resolveTheme(theme);
  const problems: Invalid[] = [];
  for (const pair of CONTRAST_PAIRS) {
    const ratio = contrastRatio(resolved[pair.foreground], resolved[pair.background]);
    if (ratio >= pair.minimum) continue;
    const candidates = [pair.foreground, pair.background, DERIVED[pair.foreground], DERIVED[pair.background]];
    const named = candidates.find((name) => name !== undefined && theme[name] !== undefined) ?? pair.foreground;
    problems.push({
      propertyName: `${prefix}.${named}`,
      message: `${pair.foreground} ${resolved[pair.foreground]} on ${pair.background} ${resolved[pair.background]} has a contrast of ${shown(ratio)}; ${pair.shows} require at least ${pair.minimum}:1 (WCAG 2.2 AA)`,
      propertyValue: resolved[named],
      reason: `contrast ${shown(ratio)} of ${pair.foreground} on ${pair.background}, below ${pair.minimum}:1`,
      code: 1003,
    });
  }
  return problems;
}

/** The canonical BCP 47 form of `tag` when it is well-formed and this runtime formats relative times in it, else undefined. */
export function canonicalLanguage(tag: string): string | undefined {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical && Intl.RelativeTimeFormat.supportedLocalesOf([canonical]).length ? canonical : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The problem of a URL the wall shows (a link or an image): it must be an absolute https URL
 * without credentials (no `javascript:`, `data:` or `http:`; the page's CSP loads https images
 * only), or undefined when it is one.
 */
export function httpsUrlProblem(url: string, propertyName: string): Invalid | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { propertyName, message: `${propertyName} must be an absolute https URL`, propertyValue: url, code: 1005 };
  }
  if (parsed.protocol !== 'https:') return { propertyName, message: `${propertyName} must be an https URL`, propertyValue: url, code: 1005 };
  if (parsed.username || parsed.password) return { propertyName, message: `${propertyName} must not carry credentials`, propertyValue: url, code: 1005 };
  return undefined;
}

/**
 * The problems of schema-valid settings beyond their schema (empty when valid): the language,
 * the URLs (the display's QR code's too) and the theme's contrast, each naming its property under `prefix`.
 */
export function settingsProblems(settings: PublicationSettings, prefix = 'publication'): Invalid[] {
  const problems: Invalid[] = [];
  if (settings.language !== undefined && !canonicalLanguage(settings.language)) {
    problems.push({ propertyName: `${prefix}.language`, message: `${prefix}.language must be a BCP 47 language tag, e.g. en, nl or pt-BR`, propertyValue: settings.language, code: 1005 });
  }
  const urls: [string, string | undefined][] = [
    ['fullscreenLink', settings.fullscreenLink],
    ['fullPage.backgroundImage', settings.fullPage?.backgroundImage],
    ['fullPage.logo', settings.fullPage?.logo],
    ['display.qrUrl', settings.display?.qrUrl],
  ];
  for (const [name, url] of urls) {
    const problem = url === undefined ? undefined : httpsUrlProblem(url, `${prefix}.${name}`);
    if (problem) problems.push(problem);
  }
  if (settings.theme) problems.push(...themeProblems(settings.theme, `${prefix}.theme`));
  return problems;
}

/** The settings as stored and shown: the language in canonical form, URLs serialized (WHATWG URL), colours in lower case. */
export function normalizeSettings(settings: PublicationSettings): PublicationSettings {
  const out: PublicationSettings = { ...settings };
  const href = (url: string) => (URL.canParse(url) ? new URL(url).href : url);
  if (settings.language !== undefined) out.language = canonicalLanguage(settings.language) ?? settings.language;
  if (settings.fullscreenLink !== undefined) out.fullscreenLink = href(settings.fullscreenLink);
  if (settings.fullPage) {
    const { backgroundImage, logo } = settings.fullPage;
    out.fullPage = { ...settings.fullPage, ...(backgroundImage !== undefined && { backgroundImage: href(backgroundImage) }), ...(logo !== undefined && { logo: href(logo) }) };
  }
  if (settings.display?.qrUrl !== undefined) out.display = { ...settings.display, qrUrl: href(settings.display.qrUrl) };
  if (settings.theme) {
    const theme: Theme = { ...settings.theme };
    for (const name of THEME_COLOURS) if (theme[name] !== undefined) theme[name] = theme[name]!.toLowerCase();
    out.theme = theme;
  }
  return out;
}
