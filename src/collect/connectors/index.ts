/**
 * The registry of connectors: one module per service of the service table (`services.ts`), each
 * of the shape in `../connector.ts`. The type makes a service without a connector a compile error.
 */
import type { Service } from '../../services.ts';
import type { Connector } from '../connector.ts';
import { bluesky } from './bluesky.ts';
import { facebook } from './facebook.ts';
import { flickr } from './flickr.ts';
import { instagram } from './instagram.ts';
import { mastodon } from './mastodon.ts';
import { rss } from './rss.ts';
import { tumblr } from './tumblr.ts';
import { twitter } from './twitter.ts';
import { vimeo } from './vimeo.ts';
import { vk } from './vk.ts';
import { youtube } from './youtube.ts';

const connectors: { readonly [S in Service]: Connector } = { rss, twitter, facebook, instagram, youtube, tumblr, vimeo, flickr, vk, mastodon, bluesky };

/** The connector of `service`, or undefined for a name that is not a service. */
export function connectorFor(service: string): Connector | undefined {
  return Object.hasOwn(connectors, service) ? connectors[service as Service] : undefined;
}
