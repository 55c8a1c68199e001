/** The module of Vimeo: its row and its connector (docs/services.md). Listed in `../index.ts`. */
import type { ServiceModule } from '../module.ts';
import { vimeo as connector } from './connector.ts';
import { row } from './row.ts';

export const vimeo = { name: 'vimeo', row, connector } as const satisfies ServiceModule<'vimeo'>;
