/** The module of TikTok: its row and its connector (docs/services.md#tiktok); its connect flow is its `OAUTH` row. Listed in `../index.ts`. */
import type { ServiceModule } from '../module.ts';
import { tiktok as connector } from './connector.ts';
import { row } from './row.ts';

export const tiktok = { name: 'tiktok', row, connector } as const satisfies ServiceModule<'tiktok'>;
