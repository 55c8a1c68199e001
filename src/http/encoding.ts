/**
 * Content codings a response may be sent in (RFC 9110 §8.4.1, proactive negotiation by
 * `Accept-Encoding`, §12.5.3), for bodies the server keeps compressed ahead: the console's assets
 * (console/routes.ts) and the public pages the read path keeps (queue/respond.ts,
 * docs/api.md#caching). Compressing is done when a body is kept, never per request.
 */
import { negotiate } from '@fastify/accept-negotiator';

/** The codings a body may be kept in. */
export type Coding = 'br' | 'gzip';

/**
 * The coding among `offered` that `header` (the request's `Accept-Encoding`) accepts with the
 * highest quality, the earlier one of `offered` at equal quality; null when it accepts none of
 * them (send the body as it is: `identity` is always acceptable unless refused, and a refused
 * identity is not answered with 406 either). Codings compare case-insensitively (§8.4.1). Linear
 * in the header's length (at most Node's 16 KiB of headers).
 */
export function acceptedCoding<C extends Coding>(header: string | string[] | undefined, offered: C[]): C | null {
  return typeof header === 'string' && header ? negotiate(header.toLowerCase(), offered) : null;
}
