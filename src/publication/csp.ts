/**
 * The Content-Security-Policy of the publication page (docs/api.md#publication, CSP Level 3):
 * nothing runs or loads unless listed here.
 *
 * - `sandbox` (CSP3 §6.3.2, HTML "sandboxing flag set"): the page, with the contract's
 *   customization JavaScript, runs in an opaque origin whatever frames it or however it is
 *   opened. It is never the origin of the queue, the console or the authorization server, even
 *   when those are one origin (the default): it reads no cookies or storage of that origin, and
 *   every request it makes is cross-origin, so it gets no sign-in session (issue 30). Allowed:
 *   scripts, and popups that escape the sandbox (links open in an ordinary new tab). Never
 *   `allow-same-origin`, which would give the page its URL's origin back; nor forms, top-level
 *   navigation or modals. The public endpoints the page reads answer CORS `*` for it.
 * - scripts and styles: only elements carrying this response's nonce (the page's own
 *   wall.js/wall.css and each active customization); no inline handlers, no `eval`;
 * - images: https anywhere, `data:` (inline thumbnails) and the queue origin; media: https;
 * - frames: only the video players of `EMBED_HOSTS`, over https (they inherit the sandbox);
 * - connections (fetch, EventSource): the queue origin only (`'self'` is the URL's origin, also
 *   in a sandboxed document);
 * - fonts: https and `data:` (customizations may bring web fonts);
 * - `frame-ancestors *`: the page exists to be embedded by any site; the console's preview
 *   (`?preview=true`) only by the console's origin (`ancestors`).
 */
import { EMBED_HOSTS } from '../lib/sanitize.ts';

/** The sandbox tokens of the page: scripts and unsandboxed new tabs, never `allow-same-origin`. */
export const WALL_SANDBOX = 'allow-scripts allow-popups allow-popups-to-escape-sandbox';

/** The policy of the module's list with this response's `nonce`; `ancestors` may frame the page (default any). */
export function publicationCsp(nonce: string, ancestors = '*'): string {
  return [
    `sandbox ${WALL_SANDBOX}`,
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
