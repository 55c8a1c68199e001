/**
 * A publication theme (docs/api.md#publication-settings) as the CSS custom properties of wall.css.
 * The values come from validated settings only (`#rgb`/`#rrggbb` colours, a font name of
 * `THEME_FONTS`, an integer radius, a card style of `CARD_STYLES`), so nothing outside can end the
 * rule or the `<style>` element; the page puts it in a `<style>` with its nonce, before the
 * contract's customizations (which may still override it). In `lib` because the console's
 * Publication screen builds the same rule from an unsaved theme for its live preview
 * (`src/console/app/screens/publication/settings.ts`, sent as preview CSS).
 */
import { relativeLuminance } from './contrast.ts';
import { resolveTheme, type Theme, THEME_FONTS } from './publication-settings.ts';

/** The `:root` rule of `theme`, or undefined when the settings have none (wall.css's defaults apply). */
export function themeCss(theme: Theme | undefined): string | undefined {
  if (!theme) return undefined;
  const t = resolveTheme(theme);
  const shadow = t.cardStyle === 'flat' ? 'none' : t.cardStyle === 'outline' ? `0 0 0 1px ${t.muted}` : undefined;
  const properties: [string, string][] = [
    ['--sluice-bg', t.background],
    ['--sluice-card', t.card],
    ['--sluice-text', t.text],
    ['--sluice-muted', t.muted],
    ['--sluice-accent', t.accent],
    ['--sluice-accent-text', t.accentText],
    ['--sluice-badge-text', t.badgeText],
    ['--sluice-badge-bg', t.badgeBackground],
    // Kudos take the accent, whose contrast on cards was checked (the default red was not).
    ['--sluice-kudos', t.accent],
    ['--sluice-radius', `${Math.trunc(t.radius)}px`],
    ['--sluice-font', THEME_FONTS[t.font]],
    ...(shadow ? ([['--sluice-shadow', shadow]] as [string, string][]) : []),
    ['color-scheme', relativeLuminance(t.background) < 0.18 ? 'dark' : 'light'],
  ];
  return `:root { ${properties.map(([name, value]) => `${name}: ${value};`).join(' ')} }`;
}
