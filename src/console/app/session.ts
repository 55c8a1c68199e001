/**
 * Who is signed in and which contracts they may use: `GET /v1/oauth/me` and
 * `GET /v1/customer/contracts/me`, loaded once after sign-in (`loadSession`) and again after a
 * change (`reloadContracts`). The current contract is the `:contract` of the address
 * (`useContractId`); the last one chosen is remembered for links that need one.
 */
import { useRoute } from 'preact-iso/router';
import { useEffect } from 'preact/hooks';
import { api } from './api.ts';
import { config } from './config.ts';
import type { Contract, Me } from './resources.ts';
import { createStore, useStore } from './store.ts';


export interface Session {
  me?: Me;
  contracts?: Contract[];
  error?: unknown;
}

export const session = createStore<Session>({});

/** Loads who is signed in and their contracts into `session`; a failure is kept as `session.error`, not thrown. */
export async function loadSession(): Promise<void> {
  try {
    const [me, contracts] = await Promise.all([api.get<Me>(`${config.authUrl}/v1/oauth/me`), api.get<Contract[]>('/v1/customer/contracts/me')]);
    session.set({ me, contracts });
  } catch (error) {
    session.set({ ...session.get(), error });
  }
}

/** Reads the signed-in consumer's contracts again (after one was created or changed); throws the API's error. */
export async function reloadContracts(): Promise<void> {
  const contracts = await api.get<Contract[]>('/v1/customer/contracts/me');
  session.set({ ...session.get(), contracts });
}

/** The session, re-rendering the component when it changes. */
export function useSession(): Session {
  return useStore(session);
}

const LAST = 'sluice.contract';

/** The contract id of the address (`:contract`), remembered as the last one used. */
export function useContractId(): string | undefined {
  const { params } = useRoute();
  const id = params.contract;
  useEffect(() => {
    if (id) sessionStorage.setItem(LAST, id);
  }, [id]);
  return id;
}

/** The contract for links that need one: the last used that the user still has, else the first. */
export function defaultContractId(contracts: Contract[] | undefined): string | undefined {
  const last = sessionStorage.getItem(LAST);
  return contracts?.find((contract) => contract._id === last)?._id ?? contracts?.[0]?._id;
}
