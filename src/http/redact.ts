/**
 * What request logs may show (issue 3: no token, secret or password is ever written to a log):
 * the URL with the values of credential-bearing query parameters replaced by `[redacted]`.
 * Bodies and headers are not logged at all (Fastify's default request serializer).
 */

/**
 * Query parameters whose values are credentials (tokens may travel in the query:
 * docs/api.md#authentication), or stand for one: an OAuth `state` (with its browser's binding
 * cookie it finishes a connect flow, docs/api.md#connecting-an-account).
 */
const SECRET_PARAMS = new Set(['access_token', 'refresh_token', 'code', 'code_verifier', 'client_secret', 'password', 'token', 'id_token', 'state']);

/** `url` (path and query) with secret query values, and an invitation or password-reset link's token, redacted; other parameters unchanged. */
export function redactUrl(url: string): string {
  // A link's token is its path's last segment (docs/api.md#accepting-an-invitation, docs/api.md#password-reset).
  if (url.startsWith('/v1/invitations/') || url.startsWith('/v1/password-reset/')) url = url.replace(/^\/v1\/(invitations|password-reset)\/[^/?#]*/, '/v1/$1/[redacted]');
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // keep the raw name
      }
      return SECRET_PARAMS.has(decoded.toLowerCase()) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}
