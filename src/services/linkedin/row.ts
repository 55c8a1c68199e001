/**
 * The service table's row of linkedin (LinkedIn's Community Management API; docs/services.md#linkedin):
 * its input type, base URL and credential read from the environment. Listed in `../table.ts`.
 */
import { type ServiceRow, secret } from '../kit/row.ts';

/** An organization id or its URN (`urn:li:organization:<id>`); the first group is the id. */
export const LINKEDIN_ORGANIZATION = /^(?:urn:li:organization:)?(\d{1,19})$/;

export const row = {
  types: ['organization'],
  urls: { apiUrl: ['LINKEDIN_API_URL', 'https://api.linkedin.com/rest'] },
  // accessToken: a connected member's token (r_organization_social), for organizations they administer.
  credentials: { accessToken: secret('LINKEDIN_ACCESS_TOKEN') },
  checkInput: (input) => (LINKEDIN_ORGANIZATION.test(input.trim()) ? null : 'must be a LinkedIn organization id or URN, e.g. 2414183 or urn:li:organization:2414183'),
} as const satisfies ServiceRow;
