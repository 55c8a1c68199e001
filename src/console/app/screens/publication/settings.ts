/**
 * The publication settings of a collection (docs/api.md#publication-settings and
 * #display-page) as a form of the Publication screen: the wall's default layout, language,
 * auto-scroll, full-screen button, full page (background image, its credit, logo), theme (eight
 * colours, font, card style, corner radius) and the display page's settings. Saved with
 * `PATCH /collection/collections/{id}` `{"publication": {…}}`, which replaces the whole object:
 * an empty field is left out (the API's default applies).
 *
 * Each field's `name` is the API's `propertyName` (`publication.theme.badgeText`), so an error the
 * API answers with (400: a colour pair below WCAG 2.2 AA contrast, code 1003; a bad URL or
 * language, code 1005) is shown under the field it names, the contrast refusal under the colour
 * the request set.
 *
 * The unsaved theme is previewed live: `themeCss` (src/lib/theme-css.ts, the rule the wall itself
 * is given) of the draft's well-formed values goes to the preview frame as preview CSS
 * (`onThemeCss`, id `THEME_PREVIEW_ID`); the other settings show in the preview once saved.
 */
import { useEffect, useId } from 'preact/hooks';
import { HEX_COLOUR } from '../../../../lib/contrast.ts';
import { CARD_STYLES, DISPLAY_MODES, PUBLICATION_TYPES, RADIUS_RANGE, type Theme, THEME_COLOURS, THEME_FONTS, type ThemeColour } from '../../../../lib/publication-settings.ts';
import { themeCss } from '../../../../lib/theme-css.ts';
import { api } from '../../api.ts';
import { ErrorBanner, errorsFor, Field, useForm } from '../../forms.ts';
import { html } from '../../html.ts';
import type { Collection } from '../../resources.ts';

/** The collection's publication settings as the API has them. */
export type PublicationSettings = NonNullable<Collection['publication']>;

/** The id of the theme's preview CSS in the preview frame (not a customization's). */
export const THEME_PREVIEW_ID = 'sluice-theme-draft';

/** Each colour's label in plain words and where the wall draws it. */
const COLOURS: Record<ThemeColour, { label: string; hint: string }> = {
  background: { label: 'Page background colour', hint: 'behind the cards' },
  card: { label: 'Card colour', hint: 'the cards’ background' },
  text: { label: 'Text colour', hint: 'the cards’ text and names' },
  muted: { label: 'Secondary text colour', hint: 'times, handles, notes' },
  accent: { label: 'Accent colour', hint: 'links, buttons, the focus outline' },
  accentText: { label: 'Text on the accent colour', hint: 'the buttons’ text' },
  badgeText: {
    label: 'Source badge text colour',
    hint: 'the small source labels; follows the secondary text colour when empty',
  },
  badgeBackground: {
    label: 'Source badge colour',
    hint: 'behind the source labels; follows the page background when empty',
  },
};

const P = 'publication';
const T = `${P}.theme`;
const F = `${P}.fullPage`;
const D = `${P}.display`;

/** The form's string values, keyed by the API's propertyName. */
type Values = Record<string, string>;
/** The check boxes (booleans), by propertyName. */
const BOOLEANS = [`${P}.autoScroll`, `${D}.shuffle`];
/** The whole numbers, by propertyName. */
const NUMBERS = [`${T}.radius`, `${D}.dwellSeconds`, `${D}.perSlide`, `${D}.pinnedEvery`];

/** Every field's propertyName, with the path to its value in the settings object. */
const FIELDS: string[] = [
  `${P}.type`,
  `${P}.language`,
  `${P}.autoScroll`,
  `${P}.fullscreenLink`,
  `${P}.fullscreenText`,
  `${F}.backgroundImage`,
  `${F}.backgroundAttribution`,
  `${F}.logo`,
  ...THEME_COLOURS.map((c) => `${T}.${c}`),
  `${T}.font`,
  `${T}.cardStyle`,
  `${T}.radius`,
  `${D}.mode`,
  `${D}.dwellSeconds`,
  `${D}.perSlide`,
  `${D}.shuffle`,
  `${D}.header`,
  `${D}.qrUrl`,
  `${D}.pinnedEvery`,
];

/** The form's values of stored `settings` ('' for what is unset; 'true'/'false' for booleans). */
export function valuesOf(settings: PublicationSettings | undefined): Values {
  const values: Values = {};
  for (const name of FIELDS) {
    let at: unknown = { publication: settings ?? {} };
    for (const key of name.split('.')) at = (at as Record<string, unknown> | undefined)?.[key];
    values[name] = at === undefined || at === null ? (BOOLEANS.includes(name) ? 'false' : '') : String(at);
  }
  return values;
}

/**
 * The `publication` object of the form's `values`: empty fields left out (and an empty group
 * with them), booleans and whole numbers as JSON's (a number that does not parse goes as written,
 * for the API to refuse naming the field).
 */
export function settingsOf(values: Values): PublicationSettings {
  const settings: Record<string, unknown> = {};
  for (const name of FIELDS) {
    const raw = values[name] ?? '';
    const text = raw.trim();
    if (BOOLEANS.includes(name) ? text !== 'true' : text === '') continue;
    const value = BOOLEANS.includes(name) ? true : NUMBERS.includes(name) && /^-?\d+$/.test(text) ? Number(text) : text;
    const keys = name.split('.').slice(1);
    let at = settings;
    for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
    at[keys[keys.length - 1]!] = value;
  }
  return settings as PublicationSettings;
}

/** The draft's theme with only well-formed values, for the live preview (never refused). */
export function previewTheme(values: Values): Theme {
  const theme: Theme = {};
  for (const colour of THEME_COLOURS) {
    const value = values[`${T}.${colour}`]?.trim() ?? '';
    if (HEX_COLOUR.test(value)) theme[colour] = value;
  }
  const font = values[`${T}.font`];
  if (font && font in THEME_FONTS) theme.font = font as Theme['font'];
  const style = values[`${T}.cardStyle`];
  if (style && (CARD_STYLES as readonly string[]).includes(style)) theme.cardStyle = style as Theme['cardStyle'];
  const radius = Number(values[`${T}.radius`]);
  if (values[`${T}.radius`]?.trim() && Number.isInteger(radius) && radius >= RADIUS_RANGE.minimum && radius <= RADIUS_RANGE.maximum) theme.radius = radius;
  return theme;
}

const options = (list: readonly string[], none: string): [string, string][] => [['', none], ...list.map((v) => [v, v] as [string, string])];

/** A check box whose value is 'true'/'false', with its errors by propertyName. */
function Check({ label, name, value, onInput, error, hint }: { label: string; name: string; value: string; onInput: (value: string) => void; error: unknown; hint?: string }) {
  const id = useId();
  const errors = errorsFor(error, name);
  return html`<div class="field">
    <label
      ><input
        type="checkbox"
        name=${name}
        checked=${value === 'true'}
        aria-describedby=${hint ? `${id}-hint` : undefined}
        onChange=${(event: Event) => onInput((event.currentTarget as HTMLInputElement).checked ? 'true' : 'false')}
      />
      ${label}</label
    >
    ${hint ? html`<p class="hint" id=${`${id}-hint`}>${hint}</p>` : null} ${errors.length ? html`<p class="field__error">${errors.map((e) => e.message).join(' ')}</p>` : null}
  </div>`;
}

/**
 * The settings form of `collection`; `onSaved` gets the collection the API answered with,
 * `onThemeCss` the preview CSS of the draft theme on every change.
 */
export function SettingsForm({ collection, onSaved, onThemeCss }: { collection: Collection; onSaved: (saved: Collection) => void; onThemeCss: (css: string) => void }) {
  const form = useForm<Values>(
    // The stored settings are part of the draft's key: after a save the form starts from them.
    `publication-settings:${collection._id}:${JSON.stringify(collection.publication ?? {})}`,
    valuesOf(collection.publication),
    FIELDS,
  );
  const v = form.values;
  const field = (name: string, label: string, more: Record<string, unknown> = {}) => html`<${Field} label=${label} name=${name} value=${v[name] ?? ''} onInput=${form.set(name)} error=${form.error} ...${more} />`;
  const themeKey = JSON.stringify(previewTheme(v));
  useEffect(() => onThemeCss(themeCss(previewTheme(v)) ?? ''), [themeKey]);
  const save = form.submit(async (values) =>
    onSaved(
      await api.patch<Collection>(`/collection/collections/${collection._id}`, {
        publication: settingsOf(values),
      }),
    ),
  );
  return html`<form class="card publication__settings" aria-labelledby="settings-title" onSubmit=${save}>
    <h2 id="settings-title">Wall settings of ${collection.name}</h2>
    <p class="hint">The preview shows colour, font, card and corner changes as you type; the other settings show there once saved. Leave a field empty for its default.</p>
    <${ErrorBanner} error=${form.formError} />
    <fieldset>
      <legend>Wall</legend>
      <div class="row">
        ${field(`${P}.type`, 'Default wall type', { options: options(PUBLICATION_TYPES, 'grid (default)'), hint: 'grid, vertical, horizontal or fullPage: used when the page or the embed names none' })}
        ${field(`${P}.language`, 'Language', { hint: 'e.g. en, nl, de, fr, es or pt-BR: the wall’s own words and times' })}
      </div>
      <${Check}
        label="Scroll by itself"
        name=${`${P}.autoScroll`}
        value=${v[`${P}.autoScroll`]}
        onInput=${form.set(`${P}.autoScroll`)}
        error=${form.error}
        hint="The wall scrolls slowly and starts again at the top; visitors can pause it."
      />
      <div class="row">
        ${field(`${P}.fullscreenLink`, 'Full-screen button link', { type: 'url', hint: 'an https address; no button without it' })}
        ${field(`${P}.fullscreenText`, 'Full-screen button text', { hint: 'default “Full screen” in the wall’s language' })}
      </div>
    </fieldset>
    <fieldset>
      <legend>Full page</legend>
      <div class="row">
        ${field(`${F}.backgroundImage`, 'Background image address', { type: 'url', hint: 'an https address of a picture behind the page' })}
        ${field(`${F}.backgroundAttribution`, 'Background image credit', { hint: 'shown at the foot of the page' })}
        ${field(`${F}.logo`, 'Logo address', { type: 'url', hint: 'an https address, shown beside the title' })}
      </div>
    </fieldset>
    <fieldset>
      <legend>Theme</legend>
      <p class="hint">Colours as #rrggbb. A colour pair that is hard to read (below the WCAG AA contrast) is refused, and the refusal is shown under the colour.</p>
      <div class="publication__colours">
        ${THEME_COLOURS.map((c) => {
          const name = `${T}.${c}`;
          const value = v[name] ?? '';
          return html`<div class="publication__colour">
            <span class="publication__swatch" aria-hidden="true" style=${HEX_COLOUR.test(value.trim()) ? { background: value.trim() } : {}}></span>
            ${field(name, COLOURS[c].label, { hint: `${COLOURS[c].hint} (${c})` })}
          </div>`;
        })}
      </div>
      <div class="row">
        ${field(`${T}.font`, 'Font', { options: options(Object.keys(THEME_FONTS), 'system (default)') })} ${field(`${T}.cardStyle`, 'Card style', { options: options(CARD_STYLES, 'shadow (default)') })}
        ${field(`${T}.radius`, 'Corner radius (pixels)', { type: 'number', hint: `${RADIUS_RANGE.minimum} to ${RADIUS_RANGE.maximum}, default 14` })}
      </div>
    </fieldset>
    <fieldset>
      <legend>Display page (event screens)</legend>
      <div class="row">
        ${field(`${D}.mode`, 'Display mode', { options: options(DISPLAY_MODES, 'wall (default)') })} ${field(`${D}.header`, 'Display header text', { hint: 'e.g. the event’s hashtag; default the collection’s name' })}
        ${field(`${D}.qrUrl`, 'QR code address', { type: 'url', hint: 'an https address; no QR code without it' })}
      </div>
      <div class="row">
        ${field(`${D}.dwellSeconds`, 'Seconds per carousel slide', { type: 'number', hint: '2 to 300, default 8' })} ${field(`${D}.perSlide`, 'Items per carousel slide', { type: 'number', hint: '1 to 4, default 1' })}
        ${field(`${D}.pinnedEvery`, 'Show a pinned item again after this many items', { type: 'number', hint: '1 to 100; carousel and ticker' })}
      </div>
      <${Check} label="Shuffle the items" name=${`${D}.shuffle`} value=${v[`${D}.shuffle`]} onInput=${form.set(`${D}.shuffle`)} error=${form.error} />
    </fieldset>
    <div class="buttons">
      <button type="submit" disabled=${form.busy}>Save wall settings</button>
      <button type="button" class="secondary" onClick=${() => form.reset()}>Discard changes</button>
    </div>
  </form>`;
}
