/**
 * The Content-Security-Policy of the publication page (docs/api.md#publication, CSP Level 3):
 * nothing runs or loads unless listed here.
 *
 * - scripts and styles: only elements carrying this response's nonce (the page's own
 *   wall.js/wall.css and each active customization); no inline handlers, no `eval`;
 * - images: https anywhere, `data:` (inline thumbnails) and the queue origin; media: https;
 * - frames: only the video players of `EMBED_HOSTS`, over https;
 * - connections (fetch, EventSource): the queue origin only;
 * - fonts: https and `data:` (customizations may bring web fonts);
 * - `frame-ancestors *`: the page exists to be embedded by any site; the console's preview
 *   (`?preview=true`) only by the console's origin (`ancestors`).
 */
import { EMBED_HOSTS } from './sanitize.ts';

/** The policy of the module's list with this response's `nonce`; `ancestors` may frame the page (default any). */
export function publicationCsp(nonce: string, ancestors = '*'): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' https: data:",
    'media-src https:',
    'font-src https: data:',
    `frame-src ${EMBED_HOSTS.map((host) => `https://${host}`).join(' ')}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}
