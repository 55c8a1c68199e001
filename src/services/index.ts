/**
 * The registry of the services (docs/architecture.md#services): one module per service of the
 * table (`table.ts`), each from its folder, of the shape in `module.ts`. Everything outside
 * `services/` reaches a service through here, never by its name; the type makes a service of the
 * table without a module a compile error. Every item a connector returns leaves here in the
 * content item's shape (`inShape`: `children` an array, `url` a string, no property of the wrong type).
 */
import { inShape } from '../item.ts';
import type { Connector } from './connector.ts';
import type { ServiceModule } from './module.ts';
import type { Service } from './table.ts';
import { bluesky } from './bluesky/index.ts';
import { twitch } from './twitch/index.ts';
import { facebook } from './facebook/index.ts';
import { flickr } from './flickr/index.ts';
import { instagram } from './instagram/index.ts';
import { mastodon } from './mastodon/index.ts';
import { rss } from './rss/index.ts';
import { tumblr } from './tumblr/index.ts';
import { twitter } from './twitter/index.ts';
import { vimeo } from './vimeo/index.ts';
import { vk } from './vk/index.ts';
import { youtube } from './youtube/index.ts';
import { pixelfed } from './pixelfed/index.ts';
import { lemmy } from './lemmy/index.ts';
import { reddit } from './reddit/index.ts';
import { tiktok } from './tiktok/index.ts';
import { linkedin } from './linkedin/index.ts';
import { threads } from './threads/index.ts';

/** The modules, by service name. */
const MODULES: { readonly [S in Service]: ServiceModule<S> } = Object.freeze({ twitter, facebook, instagram, youtube, tumblr, vimeo, flickr, vk, rss, mastodon, bluesky, pixelfed, lemmy, reddit, tiktok, linkedin, twitch, threads });

/** The modules in the table's order. */
export const SERVICE_MODULES: readonly ServiceModule<Service>[] = Object.values(MODULES);

/** The module of `service`, or undefined for a name that is not a service. */
export function serviceModule(service: string): ServiceModule<Service> | undefined {
  return Object.hasOwn(MODULES, service) ? MODULES[service as Service] : undefined;
}

/** `connector` with every item it collects or looks up put in shape (`inShape`). */
function shaped(connector: Connector): Connector {
  const { lookup } = connector;
  return {
    ...connector,
    async collect(input, state, ctx) {
      const result = await connector.collect(input, state, ctx);
      return { ...result, items: result.items.map((item) => inShape(item)) };
    },
    ...(lookup && {
      lookup: {
        ...lookup,
        async lookup(input, itemIds, ctx, stored) {
          const result = await lookup.lookup(input, itemIds, ctx, stored);
          return { ...result, items: new Map([...result.items].map(([id, item]) => [id, inShape(item)])) };
        },
      },
    }),
  };
}

const connectors = new Map(SERVICE_MODULES.map((module) => [module.name, shaped(module.connector)]));

/** The connector of `service` (its items in shape), or undefined for a name that is not a service. */
export function connectorFor(service: string): Connector | undefined {
  return serviceModule(service) && connectors.get(service as Service);
}

/** The services whose connector reads many items at once by id (docs/services.md#re-verification). */
export function lookupServices(): Service[] {
  return SERVICE_MODULES.filter((module) => module.connector.lookup).map((module) => module.name);
}

/** The services whose lookup the kudos refresh uses (docs/services.md#kudos-refresh): those of `lookupServices` not `reverifyOnly`. */
export function kudosServices(): Service[] {
  return SERVICE_MODULES.filter((module) => module.connector.lookup && !module.connector.lookup.reverifyOnly).map((module) => module.name);
}
