/**
 * The registry of connectors: a list, one module per service, each of the shape in
 * `../connector.ts`. A service without a connector here is accepted as an input but reported in
 * its status as not supported yet.
 */
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

export const connectors: readonly Connector[] = [rss, twitter, facebook, instagram, youtube, tumblr, vimeo, flickr, vk, mastodon, bluesky];

export function connectorFor(service: string): Connector | undefined {
  return connectors.find((connector) => connector.service === service);
}
