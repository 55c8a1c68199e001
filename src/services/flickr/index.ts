/** The module of Flickr: its row and its connector (docs/services.md). Listed in `../index.ts`. */
import type { ServiceModule } from '../module.ts';
import { flickr as connector } from './connector.ts';
import { row } from './row.ts';

export const flickr = { name: 'flickr', row, connector } as const satisfies ServiceModule<'flickr'>;
