/**
 * Which methods a path has routes for, so that a request with another method on a known path is
 * answered 405 with `Allow` (RFC 9110 §15.5.5–6) rather than 404. Every route the application
 * registers is mirrored (Fastify's `onRoute` hook) into a find-my-way router, the router Fastify
 * itself uses, with the same options, so a path matches here exactly when it would match there.
 */
import type { FastifyInstance } from 'fastify';
import Router, { type HTTPMethod } from 'find-my-way';

/** Path parameters at most this many characters (Fastify's `maxParamLength`; the interface's slugs and ids are at most 200). */
export const MAX_PARAM_LENGTH = 1000;

/** Router options shared with Fastify's router (app.ts). */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH } as const;

/**
 * Starts mirroring `app`'s routes (call before registering them); returns the function that
 * lists the methods a path (without query) has routes for, sorted, empty for an unknown path.
 */
export function allowedMethods(app: FastifyInstance): (path: string) => string[] {
  const router = Router(ROUTER_OPTIONS);
  const methods = new Set<HTTPMethod>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat() as HTTPMethod[]) {
      methods.add(method);
      try {
        router.on(method, route.url, () => {});
      } catch {
        // The same method and path registered twice (e.g. a HEAD route for a GET): once is enough.
      }
    }
  });
  return (path) => {
    try {
      return [...methods].filter((method) => router.find(method, path) !== null).sort();
    } catch {
      return [];
    }
  };
}
