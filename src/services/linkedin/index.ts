/**
 * The module of LinkedIn: its row and its connector (docs/services.md#linkedin); its connect flow
 * is its `OAUTH` row. An organization named by id or by URN is one source (`sourceForm`: the id).
 * Listed in `../index.ts`.
 */
import { handleForm, type ServiceModule } from '../module.ts';
import { linkedin as connector } from './connector.ts';
import { LINKEDIN_ORGANIZATION, row } from './row.ts';

export const linkedin = {
  name: 'linkedin',
  row,
  connector,
  sourceForm: (_type, text) => LINKEDIN_ORGANIZATION.exec(text.trim())?.[1] ?? handleForm(text),
} as const satisfies ServiceModule<'linkedin'>;
