/**
 * The registry of connectors: a list, one module per service, each of the shape in
 * `../connector.ts`. A service without a connector here is accepted as an input but reported in
 * its status as not supported yet.
 */
import type { Connector } from '../connector.ts';
import { bluesky } from './bluesky.ts';
import { flickr } from './flickr.ts';
import { mastodon } from './mastodon.ts';
import { rss } from './rss.ts';
import { vimeo } from './vimeo.ts';
import { vk } from './vk.ts';

export const connectors: readonly Connector[] = [
  rss,
  vimeo,
  flickr,
  mastodon,
  bluesky,
  vk,
];

export function connectorFor(service: string): Connector | undefined {
  return connectors.find((connector) => connector.service === service);
}
