/**
 * The registry of connectors: one module per service of the service table (`services.ts`), each
 * of the shape in `../connector.ts`. The type makes a service without a connector a compile error.
 * Every item a connector returns leaves here in the content item's shape (`inShape`:
 * `children` an array, `url` a string, no property of the wrong type).
 */
import { inShape } from '../item.ts';
import type { Service } from './table.ts';
import type { Connector } from './connector.ts';
import { bluesky } from './bluesky/connector.ts';
import { facebook } from './facebook/connector.ts';
import { flickr } from './flickr/connector.ts';
import { instagram } from './instagram/connector.ts';
import { mastodon } from './mastodon/connector.ts';
import { rss } from './rss/connector.ts';
import { tumblr } from './tumblr/connector.ts';
import { twitter } from './twitter/connector.ts';
import { vimeo } from './vimeo/connector.ts';
import { vk } from './vk/connector.ts';
import { youtube } from './youtube/connector.ts';

/** `connector` with every item it collects put in shape (`inShape`). */
function shaped(connector: Connector): Connector {
  return {
    ...connector,
    async collect(input, state, ctx) {
      const result = await connector.collect(input, state, ctx);
      return { ...result, items: result.items.map((item) => inShape(item)) };
    },
  };
}

const connectors: { readonly [S in Service]: Connector } = Object.freeze({
  rss: shaped(rss),
  twitter: shaped(twitter),
  facebook: shaped(facebook),
  instagram: shaped(instagram),
  youtube: shaped(youtube),
  tumblr: shaped(tumblr),
  vimeo: shaped(vimeo),
  flickr: shaped(flickr),
  vk: shaped(vk),
  mastodon: shaped(mastodon),
  bluesky: shaped(bluesky),
});

/** The connector of `service` (its items in shape), or undefined for a name that is not a service. */
export function connectorFor(service: string): Connector | undefined {
  return Object.hasOwn(connectors, service) ? connectors[service as Service] : undefined;
}

/** The services whose connector reads many items' kudos at once (docs/services.md#kudos-refresh). */
export function kudosServices(): Service[] {
  return (Object.keys(connectors) as Service[]).filter((service) => connectors[service].kudos);
}
