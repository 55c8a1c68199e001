/**
 * The service table's row of tiktok (TikTok's Display API; docs/services.md#tiktok): its input
 * type, base URL and credential read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret } from '../kit/row.ts';

/** A TikTok username (letters, digits, `_` and `.`, 2–24 characters), with or without `@`. */
export const TIKTOK_USERNAME = /^@?([A-Za-z0-9_.]{2,24})$/;

export const row = {
  types: ['user'],
  urls: { apiUrl: ['TIKTOK_API_URL', 'https://open.tiktokapis.com'] },
  // accessToken: a connected account's user access token (24 h, refreshed through its refresh token).
  credentials: { accessToken: secret('TIKTOK_ACCESS_TOKEN') },
  checkInput: (input) => (TIKTOK_USERNAME.test(input.trim()) ? null : 'must be the TikTok username of the connected account (2–24 letters, digits, _ or .), e.g. @scout2015'),
} as const satisfies ServiceRow;
