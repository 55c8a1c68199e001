/**
 * The part of `oidc-provider` 9's API that test/oidc-provider.ts uses: the package ships no types
 * (and @types/oidc-provider is not installed). https://github.com/panva/node-oidc-provider/blob/v9.x/docs/README.md
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** The Koa context a middleware sees. */
  interface ProviderContext {
    path: string;
    body: unknown;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** Adds a Koa middleware before the provider's routes. */
    use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void;
    /** The request listener of a node:http server. */
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
