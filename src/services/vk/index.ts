/** The module of VK: its row and its connector (docs/services.md). Listed in `../index.ts`. */
import type { ServiceModule } from '../module.ts';
import { vk as connector } from './connector.ts';
import { row } from './row.ts';

export const vk = { name: 'vk', row, connector } as const satisfies ServiceModule<'vk'>;
