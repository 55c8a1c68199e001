/**
 * Who is signed in and which contracts they may use: `GET /v1/oauth/me` and
 * `GET /v1/customer/contracts/me`, loaded once after sign-in (`loadSession`) and again after a
 * change (`reloadContracts`). The current contract is the `:contract` of the address
 * (`useContractId`); the last one chosen is remembered (remember.ts) for links that need one.
 */
import { useRoute } from 'preact-iso/router';
import { useEffect } from 'preact/hooks';
import { api } from './api.ts';
import { config } from './config.ts';
import type { Contract, Me } from './resources.ts';
import { forgetContract, rememberContract, rememberedContract } from './remember.ts';
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

/**
 * The contract id of the address (`:contract`), remembered (remember.ts) as the signed-in user's
 * last one once the session shows it is theirs.
 */
export function useContractId(): string | undefined {
  const { params } = useRoute();
  const { me, contracts } = useSession();
  const id = params.contract;
  const granted = Boolean(id && contracts?.some((contract) => contract._id === id));
  useEffect(() => {
    if (id && granted) rememberContract(me?.consumer_id, id);
  }, [id, granted, me]);
  return id;
}

/**
 * The contract for links that need one: the user's last used (remember.ts) while they still have
 * it, else the first. A remembered contract no longer granted is forgotten silently.
 */
export function defaultContractId(contracts: Contract[] | undefined): string | undefined {
  const user = session.get().me?.consumer_id;
  const last = rememberedContract(user);
  if (!contracts) return undefined;
  if (last && !contracts.some((contract) => contract._id === last)) forgetContract(user, last);
  return contracts.find((contract) => contract._id === last)?._id ?? contracts[0]?._id;
}
