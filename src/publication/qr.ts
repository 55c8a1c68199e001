/**
 * The display page's QR code (docs/api.md#display-page): the URL of the collection's
 * `publication.display.qrUrl` (a validated https URL) encoded by the `qrcode` package (ISO/IEC
 * 18004) as an SVG, which the page puts inline: no image request, nothing the page's CSP must
 * allow. Dark modules on a white square with a quiet zone of two modules, whatever the theme, so
 * that phones read it from across a room; error correction level M (15 %).
 */
import QRCode from 'qrcode';

/** SVGs by URL: a display page is opened by every screen of an event, and the URL rarely changes. */
const cache = new Map<string, string>();
const CACHED = 100;

/**
 * The QR code of `url` as an `<svg>` element hidden from assistive technology (the page names it
 * on the element around it). Throws when the text does not fit a QR code (more than 2 331 bytes at
 * level M; the settings allow 500 characters).
 */
export async function qrSvg(url: string): Promise<string> {
  let svg = cache.get(url);
  if (svg === undefined) {
    const made = await QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#000000', light: '#ffffff' } });
    svg = made.replace('<svg ', '<svg class="display__qr-code" aria-hidden="true" focusable="false" ');
    if (cache.size >= CACHED) cache.delete(cache.keys().next().value!);
    cache.set(url, svg);
  }
  return svg;
}
