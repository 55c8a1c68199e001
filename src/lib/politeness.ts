/**
 * The politeness key of an input (docs/services.md#polling): the polls of inputs with one key go
 * to one remote account or host, and at most COLLECT_HOST_CONCURRENCY of them are under way at
 * once (in the process on SQLite, across the installation on PostgreSQL: `store/inputs.ts`
 * `claimDueInputs`).
 *
 * - An input that is an http(s) URL (a feed): its host name, lower case (WHATWG URL `hostname`,
 *   without port or user info: the ports of one host share it).
 * - Any other input (an API service's: a handle, a tag, a query): the account its polls use, the
 *   credential (docs/api.md#credentials) — `<service>:<contract id>:<credential id>` when the input
 *   names one, else `<service>:<contract id>:default` (the contract's default credential for the
 *   service, or the installation's own). One contract's account is not held up by another's.
 *
 * The same rule is written in SQL for PostgreSQL (`store/inputs.ts` `politenessKeySql`, a test
 * checks that both agree); SQLite calls this function (`store/db.ts`, `politeness_key`).
 */
export interface PolitenessSubject {
  service: string;
  input: string;
  contractId: string;
  credentialId?: string | null;
}

/** The politeness key of `subject` (module rules); never throws. */
export function politenessKey(subject: PolitenessSubject): string {
  if (/^https?:\/\//i.test(subject.input)) {
    try {
      return new URL(subject.input).hostname.toLowerCase();
    } catch {
      // Not a URL after all: the account's key.
    }
  }
  return `${subject.service}:${subject.contractId}:${subject.credentialId ?? 'default'}`;
}
