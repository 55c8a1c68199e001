/**
 * The management API's records as the console reads them (docs/api.md#collections,
 * docs/api.md#inputs, docs/api.md#input-status): one declaration each, for every screen.
 */

/** A collection (`GET /collection/collections`). */
export interface Collection {
  _id: string;
  name: string;
  slug: string;
  type: string;
  contractId: string;
  active: boolean;
  filterId?: string;
}

/** A warning of an input's last successful poll (`status.warnings`). */
export interface Warning {
  code: string;
  count: number;
  message: string;
}

/** An input (`GET /collection/inputs`), with its status. */
export interface Input {
  _id: string;
  service: string;
  type: string;
  input: string;
  contractId: string;
  collectionId: string;
  filterId?: string;
  latitude?: number;
  longitude?: number;
  radius?: number;
  display: boolean;
  active: boolean;
  status: { lastRun: string | null; lastSuccess: string | null; lastError: string | null; nextRun: string | null; collected: number; rejected: number; warnings?: Warning[] };
}
