/** The module of Tumblr: its row and its connector (docs/services.md). Listed in `../index.ts`. */
import type { ServiceModule } from '../module.ts';
import { tumblr as connector } from './connector.ts';
import { row } from './row.ts';

export const tumblr = { name: 'tumblr', row, connector } as const satisfies ServiceModule<'tumblr'>;
