/**
 * The service table's row of vimeo (the Vimeo API; docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret } from '../kit/row.ts';

export const row = {
  types: ['user', 'album'],
  urls: { apiUrl: ['VIMEO_API_URL', 'https://api.vimeo.com'] },
  credentials: { accessToken: secret('VIMEO_ACCESS_TOKEN') },
} as const satisfies ServiceRow;
