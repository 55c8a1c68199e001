/** The module of Twitch chat (its listener is `stream/chat.ts`): its row and its connector (docs/services.md#twitch-chat). Listed in `../index.ts`. */
import type { ServiceModule } from '../module.ts';
import { twitch as connector } from './connector.ts';
import { row } from './row.ts';

export const twitch = { name: 'twitch', row, connector } as const satisfies ServiceModule<'twitch'>;
