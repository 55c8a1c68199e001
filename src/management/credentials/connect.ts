/**
 * Connect flows on {api_url} (docs/api.md#connecting-an-account): a contract connects its account
 * at a service through the service's own consent page (OAuth 2.0 authorization code grant, RFC
 * 6749 §4.1, as a client through `lib/oauth-client.ts`), and the callback stores the credential
 * as `POST /collection/credentials` does.
 *
 *   GET /collection/credentials/connect/{service}?contract_id=…[&name][&default][&return_to][&instance][&credential_id]
 *       token-bearing; → 200 {authorizationUrl, expiresAt} to `Accept: application/json`, else 302
 *   GET /collection/credentials/callback/{service}?code=…&state=…   (or ?error=…&state=…)
 *       no token: the state stands for the consumer who started; → 303 to return_to, or a page
 *
 * The `state` is 256 random bits, bound to the contract, the consumer and the service for 10
 * minutes and taken once (`store/connect.ts`), and bound to the browser that started: the start
 * sets a cookie (one per flow, `sluice_connect_<16 hex>`, HttpOnly, SameSite=Lax so that it comes
 * back on the service's top-level redirect, Path the callbacks', Max-Age the flow's lifetime,
 * Secure on an https API_URL) holding 256 more random bits, the binding; the flow is kept only
 * under the SHA-256 of state and binding, so a callback without the starting browser's cookie finds
 * no flow (RFC 6749 §10.12, RFC 9700 §4.7.1: a victim sent to another's authorization URL cannot
 * connect their account into that one's contract). PKCE S256
 * (RFC 7636) where the service supports it. `return_to` must be on API_URL's origin (no open
 * redirect). `credential_id` reconnects: the callback replaces that credential's tokens (a
 * refresh refused, a token expired) instead of creating one. A failure after a valid state stores nothing and tells `return_to` (or the page) why;
 * a bad state is a 400 error object naming `state`.
 *
 * Services (`OAUTH` of `services/table.ts`; their apps in the configuration, `config.oauth`), and
 * those whose module connects on the user's instance (`connect.server: 'instance'`: Mastodon,
 * where Sluice registers an app at the first connect and reuses it after). What a service does
 * beyond the grant is its module's `connect` (`services/<name>/index.ts`): Facebook and Instagram
 * exchange the user token for a long-lived one, Instagram looks up the business account.
 */
import { createHash } from 'node:crypto';
import { fastifyCookie as cookie } from '@fastify/cookie';
import type { Transaction } from 'kysely';
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { ApiError, conflictError, validationError, VALIDATION_CODES } from '../../errors.ts';
import { authenticate, requireContractAccess } from '../../http/authenticate.ts';
import { errorResponses, noBody, textResponse, TOKEN_SECURITY } from '../../http/openapi.ts';
import type { App } from '../../http/typed.ts';
import { newId } from '../../lib/ids.ts';
import { authorizationUrl, exchangeCode, type HttpFetch, newState, type OAuthEndpoint, OAuthRefusal, pkcePair, type TokenSet } from '../../lib/oauth-client.ts';
import { currentSecretKey, open, seal } from '../../lib/secret-box.ts';
import { newRecordFields, iso } from '../../lib/time.ts';
import { serviceModule, SERVICE_MODULES } from '../../services/index.ts';
import { ConnectFailure, type ConnectedCredential } from '../../services/module.ts';
import { OAUTH, type OAuthService, type Service } from '../../services/table.ts';
import { recordAudit } from '../../store/audit.ts';
import { findMastodonApp, saveConnectState, saveMastodonApp, takeConnectState } from '../../store/connect.ts';
import { findConsumer } from '../../store/consumers.ts';
import { grantRole } from '../../store/contracts.ts';
import { roleAllows } from '../../http/permissions.ts';
import { insertCredential, reconnectCredential, sealedColumns } from '../../store/credentials.ts';
import type { Db } from '../../store/db.ts';
import { nameTaken } from '../../store/records.ts';
import type { ConnectStateRow, CredentialRow, Database } from '../../store/tables.ts';
import { Id } from '../schemas.ts';
import { CREDENTIAL, owned } from '../ownership.ts';
import { presentCredential } from './present.ts';

/** The services a contract can connect: those of an operator's app (`OAUTH`), then those whose module connects on the user's instance. */
export const CONNECT_SERVICES: readonly Service[] = [...(Object.keys(OAUTH) as OAuthService[]), ...SERVICE_MODULES.filter((module) => module.connect?.server === 'instance').map((module) => module.name)];
type ConnectService = Service;

/** A flow must end within this many ms of its start (10 minutes). */
export const STATE_TTL_MS = 10 * 60_000;

const ServiceParams = Type.Object({ service: Type.Unsafe<ConnectService>({ type: 'string', enum: [...CONNECT_SERVICES] }) });
const StartQuery = Type.Object({
  contract_id: Id,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  default: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  return_to: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
  instance: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  credential_id: Type.Optional(Id),
  access_token: Type.Optional(Type.String()),
});
const CallbackQuery = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 200 })),
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  error: Type.Optional(Type.String({ maxLength: 200 })),
  error_description: Type.Optional(Type.String({ maxLength: 2000 })),
  iss: Type.Optional(Type.String({ maxLength: 2000 })),
});
const Started = Type.Object({
  authorizationUrl: Type.String({ description: "the service's authorization page: send the browser there" }),
  expiresAt: Type.String({ format: 'date-time', description: 'the flow must end before this' }),
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** The key a flow is kept and found under: the SHA-256 of its state and its browser's binding. */
const flowKey = (state: string, binding: string) => sha256(`${state}\n${binding}`);
/** The name of a flow's binding cookie, one per flow so that flows in two tabs do not clash. */
const bindingCookie = (state: string) => `sluice_connect_${sha256(state).slice(0, 16)}`;

const invalid = (propertyName: string, message: string, code: number = VALIDATION_CODES.format, propertyValue?: unknown) =>
  validationError([{ propertyName, message, code, ...(propertyValue === undefined ? {} : { propertyValue }) }]);


const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The small page a callback without `return_to` answers. */
function page(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>\n`;
}

/** The operation that starts a flow (http/permissions.ts): its callback checks its starter may still call it. */
const CONNECT_OPERATION = 'GET /collection/credentials/connect/{service}';

/** Registers the module's routes on `app` (see the module's description). */
export function connectRoutes(app: App, { db, config, fetch }: { db: Db; config: Config; fetch: HttpFetch }): void {
  const apiOrigin = new URL(config.apiUrl).origin;
  const redirectUriOf = (service: string) => `${config.apiUrl}/collection/credentials/callback/${service}`;
  /** The binding cookie's attributes: sent back on the service's redirect to a callback, and nowhere else. */
  const cookieOptions = {
    path: `${new URL(config.apiUrl).pathname.replace(/\/$/, '')}/collection/credentials/callback`,
    httpOnly: true,
    sameSite: 'lax',
    secure: config.apiUrl.startsWith('https:'),
  } as const;

  /** `return_to` as an absolute URL on API_URL's origin, or 400 naming it. */
  function returnTo(raw: string | undefined): string | null {
    if (raw === undefined) return null;
    let url: URL;
    try {
      url = new URL(raw, config.apiUrl);
    } catch {
      throw invalid('return_to', 'return_to must be a URL on the API address', VALIDATION_CODES.format, raw);
    }
    if (url.origin !== apiOrigin) throw invalid('return_to', `return_to must be on ${apiOrigin} (the API address), not another origin`, VALIDATION_CODES.format, raw);
    return url.href;
  }

  /** The Mastodon instance of `raw` as an origin: https (http only where private fetches are allowed: tests), a host and nothing else. */
  function instanceOrigin(raw: string | undefined): string {
    if (!raw) throw invalid('instance', 'instance is required to connect a Mastodon account (e.g. mastodon.social)', VALIDATION_CODES.required);
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`);
    } catch {
      throw invalid('instance', 'instance must be a host name such as mastodon.social', VALIDATION_CODES.format, raw);
    }
    const allowed = url.protocol === 'https:' || (url.protocol === 'http:' && config.allowPrivateFetch);
    if (!allowed || url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
      throw invalid('instance', 'instance must be an https host name such as mastodon.social, without a path', VALIDATION_CODES.format, raw);
    }
    return url.origin;
  }

  /** The app registered on `instance` for `service`'s callback (its module's `connect.register`), registering it at the first connect. */
  async function instanceApp(service: Service, instance: string): Promise<OAuthEndpoint> {
    const redirectUri = redirectUriOf(service);
    const key = currentSecretKey(config);
    let app = await findMastodonApp(db, instance, redirectUri);
    if (!app) {
      let registered: { clientId: string; clientSecret: string };
      try {
        registered = await serviceModule(service)!.connect!.register!(instance, redirectUri, config.apiUrl, fetch);
      } catch (error) {
        throw invalid('instance', (error as Error).message, VALIDATION_CODES.format, instance);
      }
      app = await saveMastodonApp(db, { instance, redirectUri, clientId: registered.clientId, clientSecret: seal(key, registered.clientSecret), keyId: key.id, created: iso() });
    }
    return { authorizeUrl: `${instance}/oauth/authorize`, tokenUrl: `${instance}/oauth/token`, clientId: app.clientId, clientSecret: open(key, app.clientSecret), clientAuth: 'post' };
  }

  /** The configured app of `service`, or 400 naming the service and the variables to set. */
  function configuredApp(service: OAuthService): OAuthEndpoint {
    const settings = config.oauth[service];
    if (!settings.clientId || !settings.clientSecret) {
      const app = OAUTH[service].app.toUpperCase();
      throw invalid('service', `connecting a ${service} account needs the operator's ${OAUTH[service].app} app: set ${app}_CLIENT_ID and ${app}_CLIENT_SECRET`, VALIDATION_CODES.required, service);
    }
    const untypedTokens = 'untypedTokens' in OAUTH[service] && OAUTH[service].untypedTokens === true;
    return { authorizeUrl: settings.authorizeUrl, tokenUrl: settings.tokenUrl, clientId: settings.clientId, clientSecret: settings.clientSecret, clientAuth: OAUTH[service].clientAuth, untypedTokens };
  }

  app.get(
    '/collection/credentials/connect/:service',
    {
      schema: {
        tags: ['credentials'],
        security: TOKEN_SECURITY,
        params: ServiceParams,
        querystring: StartQuery,
        response: { 200: Started, 302: noBody("to the service's authorization page (Location)"), ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => {
      const { service } = request.params;
      const query = request.query;
      const principal = await authenticate(db, request);
      await requireContractAccess(db, principal, query.contract_id, 'contract_id');
      const rule = serviceModule(service)?.connect;
      const onInstance = rule?.server === 'instance';
      const endpoint = onInstance ? undefined : configuredApp(service as OAuthService);
      const returnUrl = returnTo(query.return_to);
      const now = Date.now();
      let name = query.name ?? `${service} account ${iso(now).slice(0, 16).replace('T', ' ')}`;
      if (query.credential_id) {
        // Reconnect: the credential must be the contract's, of this service; it keeps its name.
        const current = await owned(db, CREDENTIAL, query.credential_id, query.contract_id, 'credential_id');
        if (current.service !== service) throw invalid('credential_id', `credential ${current.id} is a ${current.service} credential, not a ${service} one`, VALIDATION_CODES.format, current.id);
        name = current.name;
      } else if (query.name === undefined) {
        // The default name: made unique with a number when two connects fall in the same minute.
        const base = name;
        for (let n = 2; (await nameTaken(db, 'credentials', query.contract_id, name)) && n <= 100; n++) name = `${base} (${n})`;
      } else if (await nameTaken(db, 'credentials', query.contract_id, name)) {
        throw conflictError(`A credential named ${name} already exists in this contract.`, 'name', name);
      }
      const instance = onInstance ? instanceOrigin(query.instance) : null;
      const server = endpoint ?? (await instanceApp(service, instance!));
      const pkce = onInstance || OAUTH[service as OAuthService].pkce ? await pkcePair() : undefined;
      const state = newState();
      const binding = newState();
      const expiresAt = now + STATE_TTL_MS;
      const redirectUri = redirectUriOf(service);
      await saveConnectState(
        db,
        {
          stateHash: flowKey(state, binding),
          service,
          contractId: query.contract_id,
          consumerId: principal.consumer.id,
          codeVerifier: pkce?.verifier ?? null,
          redirectUri,
          returnTo: returnUrl,
          name,
          isDefault: query.default === undefined ? null : query.default === 'true' ? 1 : 0,
          instance,
          credentialId: query.credential_id ?? null,
          expiresAt,
        },
        now,
      );
      const flow = onInstance ? { scopes: rule.scopes ?? [] } : OAUTH[service as OAuthService];
      const url = authorizationUrl(server, {
        redirectUri,
        state,
        scopes: flow.scopes,
        ...('scopeSeparator' in flow ? { scopeSeparator: flow.scopeSeparator } : {}),
        ...(pkce ? { challenge: pkce.challenge } : {}),
        ...('extra' in flow ? { extra: flow.extra } : {}),
      });
      reply.header('cache-control', 'no-store');
      reply.header('set-cookie', cookie.serialize(bindingCookie(state), binding, { ...cookieOptions, maxAge: STATE_TTL_MS / 1000 }));
      if (/\bapplication\/json\b/i.test(request.headers.accept ?? '')) return { authorizationUrl: url, expiresAt: iso(expiresAt) };
      return reply.redirect(url, 302);
    },
  );

  /** The tokens of the callback, made what the service's connector reads (its row's fields; its module's `connect.credentialOf` where it has one). */
  async function credentialOf(flow: ConnectStateRow, callback: URLSearchParams, now: number): Promise<ConnectedCredential> {
    const service = flow.service as ConnectService;
    const rule = serviceModule(service)?.connect;
    const endpoint = rule?.server === 'instance' ? await instanceApp(service, flow.instance!) : configuredApp(service as OAuthService);
    const tokens: TokenSet = await exchangeCode(endpoint, fetch, callback, flow.redirectUri, flow.codeVerifier, now);
    if (rule?.credentialOf) return rule.credentialOf(tokens, { endpoint, instance: flow.instance, fetch, services: config.services, now });
    const secret: Record<string, string> = { [OAUTH[service as OAuthService].field]: tokens.accessToken };
    if (tokens.refreshToken) secret.refreshToken = tokens.refreshToken;
    return { secret, plain: {}, expiresAt: tokens.expiresAt ?? null };
  }

  app.get(
    '/collection/credentials/callback/:service',
    {
      schema: {
        tags: ['credentials'],
        params: ServiceParams,
        querystring: CallbackQuery,
        response: {
          200: textResponse('text/html', 'the credential is connected (no return_to)'),
          303: noBody('to return_to, with credential_id and service, or error and error_description'),
          ...errorResponses(400),
        },
      },
    },
    async (request, reply) => {
      const { service } = request.params;
      const query = request.query;
      const now = Date.now();
      if (!query.state) throw invalid('state', 'state is required', VALIDATION_CODES.required);
      const name = bindingCookie(query.state);
      const binding = request.headers.cookie ? cookie.parse(request.headers.cookie)[name] : undefined;
      const flow = binding ? await takeConnectState(db, flowKey(query.state, binding), now) : undefined;
      if (!flow || flow.service !== service) {
        throw invalid('state', 'state is unknown, expired or already used, or this browser did not start the flow: start the connect flow again');
      }
      reply.header('cache-control', 'no-store');
      reply.header('set-cookie', cookie.serialize(name, '', { ...cookieOptions, maxAge: 0 }));

      const finish = (status: number, params: Record<string, string>, title: string, text: string) => {
        if (flow.returnTo) {
          const url = new URL(flow.returnTo);
          for (const [name, value] of Object.entries({ ...params, service })) url.searchParams.set(name, value);
          return reply.redirect(url.href, 303);
        }
        // 400 is among the error responses, which the typed reply does not list.
        return reply.code(status as 200).header('content-type', 'text/html; charset=utf-8').header('content-security-policy', "default-src 'none'").send(page(title, text));
      };
      const fail = (code: string, message: string) => {
        request.log.info({ service, contract: flow.contractId, error: code }, 'connect flow failed');
        return finish(400, { error: code, error_description: message }, `Not connected`, `Your ${service} account was not connected: ${message}. Nothing was stored.`);
      };

      try {
        const consumer = await findConsumer(db, flow.consumerId);
        const allowed = consumer && !consumer.disabled && roleAllows(CONNECT_OPERATION, await grantRole(db, consumer.id, flow.contractId));
        if (!allowed) throw new ConnectFailure('access_denied', 'the consumer who started lost access to the contract');
        const { secret, plain, expiresAt } = await credentialOf(flow, new URL(request.url, 'http://callback').searchParams, now);
        // Recorded in the audit trail like a credential created or changed through the API (docs/api.md#audit-trail).
        const actor = { id: consumer.id, name: consumer.name };
        if (flow.credentialId) {
          const sealed = sealedColumns(currentSecretKey(config), secret);
          const audited = async (trx: Transaction<Database>, before: CredentialRow, after: CredentialRow) => {
            await recordAudit(trx, { contractId: flow.contractId, actor, resource: 'credential', resourceId: after.id, action: 'update', before: presentCredential(before), after: presentCredential(after) }, now);
          };
          if (!(await reconnectCredential(db, flow.credentialId, flow.contractId, { sealed, plain, expiresAt, by: consumer.name }, now, audited))) throw new ConnectFailure('connect_failed', `credential ${flow.credentialId} was deleted meanwhile`);
          return finish(200, { credential_id: flow.credentialId }, 'Connected', `Your ${service} account is connected again as credential "${flow.name}". You can close this page.`);
        }
        if (await nameTaken(db, 'credentials', flow.contractId, flow.name)) throw new ConnectFailure('connect_failed', `a credential named ${flow.name} was created meanwhile`);
        const id = newId(now);
        await insertCredential(
          db,
          {
            id,
            contractId: flow.contractId,
            name: flow.name,
            active: 1,
            service,
            isDefault: flow.isDefault,
            settings: JSON.stringify(plain),
            ...sealedColumns(currentSecretKey(config), secret),
            expiresAt,
            connectedById: consumer.id,
            status: 'ok',
            lastUsed: null,
            lastError: null,
            ...newRecordFields(consumer.name, now),
          },
          now,
          async (trx, created) => {
            const row = (await trx.selectFrom('credentials').selectAll().where('id', '=', created).executeTakeFirst())!;
            await recordAudit(trx, { contractId: flow.contractId, actor, resource: 'credential', resourceId: created, action: 'create', after: presentCredential(row) }, now);
          },
        );
        return finish(200, { credential_id: id }, 'Connected', `Your ${service} account is connected as credential "${flow.name}". You can close this page.`);
      } catch (error) {
        if (error instanceof OAuthRefusal) return fail(error.error, error.error === 'access_denied' ? 'authorization was denied' : `the service refused (${error.message})`);
        if (error instanceof ConnectFailure) return fail(error.code, error.message);
        if (error instanceof ApiError) return fail('connect_failed', error.entries[0]?.message ?? 'failed');
        request.log.warn({ err: error, service }, 'connect flow failed');
        return fail('connect_failed', `the exchange with ${service} failed (${(error as Error).name})`);
      }
    },
  );
}
