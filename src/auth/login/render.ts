/**
 * Server-rendered pages of the browser sign-in: eta templates in `views/` (every `<%= %>` output is
 * HTML-escaped; the templates use no raw output except the layout's body), one stylesheet served
 * from `STYLESHEET_PATH`, and the headers every such page carries: no caching, no framing
 * (clickjacking on the consent page), a Content-Security-Policy that allows no script at all.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';

const eta = new Eta({ views: fileURLToPath(new URL('./views', import.meta.url)), autoEscape: true, cache: true });

export const STYLESHEET_PATH = '/v1/assets/sign-in.css';
export const STYLESHEET = readFileSync(new URL('./views/sign-in.css', import.meta.url), 'utf8');

export const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Sends the page `template` (login, consent, error, invitation, two-factor, password-reset) rendered with `data`, with `status`. */
export function sendPage(reply: FastifyReply, status: number, template: 'login' | 'consent' | 'error' | 'invitation' | 'two-factor' | 'password-reset', data: Record<string, unknown>): FastifyReply {
  const html = eta.render(`./${template}`, { stylesheet: STYLESHEET_PATH, ...data });
  return reply.code(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
}
