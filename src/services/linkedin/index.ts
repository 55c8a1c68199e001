/** The module of LinkedIn: its row and its connector (docs/services.md#linkedin); its connect flow is its `OAUTH` row. Listed in `../index.ts`. */
import type { ServiceModule } from '../module.ts';
import { linkedin as connector } from './connector.ts';
import { row } from './row.ts';

export const linkedin = { name: 'linkedin', row, connector } as const satisfies ServiceModule<'linkedin'>;
