/**
 * The module of Facebook (pages): its row, its connector, and its connect flow, which exchanges
 * the user token for a long-lived one (`../kit/graph.ts`). Listed in `../index.ts`.
 */
import { longLivedCredential } from '../kit/graph.ts';
import type { ServiceModule } from '../module.ts';
import { facebook as connector } from './connector.ts';
import { row } from './row.ts';

export const facebook = {
  name: 'facebook',
  row,
  connector,
  connect: { server: 'app', credentialOf: (tokens, { endpoint, fetch, now }) => longLivedCredential(tokens, endpoint, fetch, now) },
} as const satisfies ServiceModule<'facebook'>;
