/** The module of Bluesky (its Jetstream listener is `stream/jetstream.ts`): its row and its connector (docs/services.md). Listed in `../index.ts`. */
import type { ServiceModule } from '../module.ts';
import { bluesky as connector } from './connector.ts';
import { row } from './row.ts';

export const bluesky = { name: 'bluesky', row, connector } as const satisfies ServiceModule<'bluesky'>;
