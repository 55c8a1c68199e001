/**
 * Only a top-level navigation reaches the authorization endpoint (docs/api.md#browser-sign-in,
 * issue 30): a code or token travels in the URL of the redirect that answers it, and a page
 * script that made the request (fetch, XMLHttpRequest) or framed it (iframe, object) could read
 * that URL or act in the user's name. Told by the Fetch Metadata request headers (W3C "Fetch
 * Metadata Request Headers", https://www.w3.org/TR/fetch-metadata/), which browsers set and page
 * scripts cannot:
 *
 * - `Sec-Fetch-Mode` must be `navigate` and `Sec-Fetch-Dest` `document` (a top-level document,
 *   not a frame); for the forms Sluice serves itself (`sameOrigin`: the consent decision and the
 *   login), `Sec-Fetch-Site` must be `same-origin` as well.
 * - A header the request does not carry is not checked: browsers without Fetch Metadata and
 *   non-browser clients keep working (they have no page script to fear).
 *
 * A refusal is 403 ForbiddenError naming the header: the request is well formed, but refused for
 * the context it was made in (as a form without its CSRF token is); nothing is looked up, issued
 * or redirected to.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, forbiddenError } from '../../errors.ts';
import { send } from '../../http/errors.ts';

/** What each Fetch Metadata header must say, when present. */
const REQUIRED = [
  ['sec-fetch-mode', 'Sec-Fetch-Mode', 'navigate'],
  ['sec-fetch-dest', 'Sec-Fetch-Dest', 'document'],
] as const;
const SAME_ORIGIN = ['sec-fetch-site', 'Sec-Fetch-Site', 'same-origin'] as const;

/**
 * The 403 ForbiddenError for a request whose Fetch Metadata `headers` say it is not a top-level
 * navigation (or, with `sameOrigin`, not from a page of this origin), naming the first header
 * that says so; undefined when the request may go on (also when it carries no such header).
 */
export function navigationRefusal(headers: IncomingHttpHeaders, { sameOrigin }: { sameOrigin: boolean }): ApiError | undefined {
  for (const [header, name, wanted] of sameOrigin ? [...REQUIRED, SAME_ORIGIN] : REQUIRED) {
    const value = headers[header];
    if (value === undefined) continue;
    if (value !== wanted) {
      return forbiddenError(
        `Only a top-level navigation of the browser may use this address (${name}: ${wanted}); a script's request or a frame gets no authorization.`,
        name,
        value,
      );
    }
  }
  return undefined;
}

/**
 * An `onRequest` hook that answers `navigationRefusal` with the error object (JSON: the request
 * was not a navigation, so there is no page to show) and `Cache-Control: no-store`.
 */
export function topLevelNavigation({ sameOrigin }: { sameOrigin: boolean }) {
  return async function checkNavigation(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const refusal = navigationRefusal(request.headers, { sameOrigin });
    if (!refusal) return undefined;
    return send(reply.header('cache-control', 'no-store'), request, refusal);
  };
}
