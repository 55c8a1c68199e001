/**
 * The service table's row of vk (the VK API; docs/services.md): its input types, base URLs
 * and credentials read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret } from '../kit/row.ts';

export const row = {
  types: ['user', 'group', 'tag'],
  urls: { apiUrl: ['VK_API_URL', 'https://api.vk.com/method'] },
  credentials: { accessToken: secret('VK_ACCESS_TOKEN') },
} as const satisfies ServiceRow;
