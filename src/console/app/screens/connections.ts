/**
 * Connections (`/console/contracts/<contract id>/connections`): the contract's own accounts at
 * the services — its credentials — with their health and quotas, and the forms that connect,
 * change and disconnect them. All through the management API (docs/api.md#credentials):
 *
 * - the list: `GET /collection/credentials?contract_id=` (service, name, the masked `hints` of
 *   the secret fields, the non-secret fields, `connectedBy`, `health`, `default`, `active`, and
 *   `quota` when the read carries one), read again after every change;
 * - add by form: `POST /collection/credentials` with the service's fields, which come from
 *   `GET /collection/services` (`credentialFields`, docs/api.md#services). Secret values are
 *   kept in memory only, never in the form's draft (sessionStorage), and are sent once;
 * - rename, make default, deactivate / activate: `PATCH /collection/credentials/{id}`; making one
 *   the default takes it from the other of its service, so the list is read again;
 * - disconnect: `DELETE /collection/credentials/{id}` after a confirmation in a modal `<dialog>`;
 *   a credential an input still names → the API's 409, shown as a banner naming the input;
 * - connect an account (services with an OAuth flow, docs/api.md#credentials ("Connecting an account")):
 *   `GET /collection/credentials/connect/{service}?contract_id=&return_to=<this screen>[&name=]
 *   [&instance=]` with `Accept: application/json` → `{authorizationUrl}`, the service's consent
 *   page, where the browser goes (`location.assign`). The flow's callback stores the credential
 *   and sends the browser back to `return_to` with `credential_id=&service=`, or with
 *   `error=&error_description=&service=`; this screen says which, once, and drops them from the
 *   address. The services are those docs/api.md#credentials lists (`connections-model.ts`):
 *   `GET /collection/services` does not say which have a flow.
 */
import { useLocation, useRoute } from 'preact-iso/router';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { hasDraft } from '../drafts.ts';
import { ErrorBanner, errorsFor, Field, SubmitOrCancel, useForm } from '../forms.ts';
import { html } from '../html.ts';
import type { ConnectAnswer, Credential, CredentialField, ServiceEntry } from '../resources.ts';
import { screenPath } from '../paths.ts';
import { Screen } from '../screen.ts';
import { useContractId, useSession } from '../session.ts';
import { canConnect, FIELD_HINTS, plainField, quotaWords } from './connections-model.ts';
import { absolute, ago } from './sources-text.ts';

function When({ iso, now }: { iso: string; now: number }) {
  return html`<time datetime=${iso} title=${absolute.format(new Date(iso))}>${ago(iso, now)}</time>`;
}

// ---------------------------------------------------------------------------------------------
// Forms

interface AddValues extends Record<string, unknown> {
  service: string;
  name: string;
  default: boolean;
}

function Check({ label, checked, onChange, hint }: { label: string; checked: boolean; onChange: (value: boolean) => void; hint?: string }) {
  return html`<label class="connections__check">
    <input type="checkbox" checked=${checked} onChange=${(event: Event) => onChange((event.currentTarget as HTMLInputElement).checked)} />
    <span>${label}${hint ? html` <span class="muted">${hint}</span>` : null}</span>
  </label>`;
}

/** Add a credential by its fields. */
function AddForm(props: { services: ServiceEntry[]; contractId: string; onDone: (created?: Credential) => void }) {
  const services = props.services.filter((entry) => entry.credentialFields.length > 0);
  const form = useForm<AddValues>('add-credential', { service: services[0]?.service ?? '', name: '', default: true }, [
    'service',
    'name',
    'default',
    ...new Set(services.flatMap((entry) => entry.credentialFields.map((field) => field.name))),
  ]);
  // The service's own fields: in memory only (secrets never go into a draft).
  const [fields, setFields] = useState<Record<string, string>>({});
  const service = services.find((entry) => entry.service === form.values.service) ?? services[0];
  const own = service ? service.credentialFields : [];

  const save = form.submit(async (values) => {
    const body: Record<string, unknown> = { service: service?.service ?? values.service, name: values.name.trim(), default: values.default, contractId: props.contractId };
    for (const field of own) {
      const value = fields[field.name]?.trim() ?? '';
      if (value === '') continue;
      body[field.name] = field.name === 'expiresAt' && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : value;
    }
    const created = await api.post<Credential>('/collection/credentials', body);
    setFields({});
    props.onDone(created);
  });

  if (!services.length) return html`<p class="card">No service of this installation takes a credential.</p>`;
  return html`<form class="card connections__form" aria-labelledby="add-credential-title" onSubmit=${save} autocomplete="off">
    <h2 id="add-credential-title">New credential</h2>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="Service" name="service" autoFocus value=${service?.service ?? ''} options=${services.map((entry) => [entry.service, entry.service] as [string, string])}
        onInput=${(value: string) => form.set('service')(value)} error=${form.error} />
      <${Field} label="Name" name="name" required value=${form.values.name} onInput=${form.set('name')} error=${form.error} hint="How your team recognises it, e.g. Newsroom X account." />
    </div>
    ${own.map(
      (field) => html`<${Field}
        key=${`${service?.service}:${field.name}`}
        label=${field.name}
        name=${field.name}
        type=${field.secret ? 'password' : field.name === 'expiresAt' ? 'datetime-local' : 'text'}
        required=${field.secret}
        value=${fields[field.name] ?? ''}
        onInput=${(value: string) => setFields((before) => ({ ...before, [field.name]: value }))}
        error=${form.error}
        hint=${field.secret ? 'Secret: stored encrypted, never shown again.' : FIELD_HINTS[field.name]}
      />`,
    )}
    <${Check} label="default" hint=${`(used by inputs of ${service?.service ?? 'the service'} that name no credential)`} checked=${form.values.default} onChange=${form.set('default')} />
    ${errorsFor(form.error, 'default').length ? html`<p class="field__error">${errorsFor(form.error, 'default').map((e) => e.message).join(' ')}</p>` : null}
    <${SubmitOrCancel} form=${form} label="Save credential" onCancel=${() => {
      setFields({});
      props.onDone();
    }} />
  </form>`;
}

/** Connect an account through the service's consent page (the browser leaves the console). */
function ConnectForm(props: { services: ServiceEntry[]; contractId: string; onCancel: () => void }) {
  const services = props.services.filter(canConnect);
  const form = useForm('connect-account', { service: services[0]?.service ?? '', name: '', instance: '' }, ['service', 'name', 'instance', 'return_to']);
  const service = services.find((entry) => entry.service === form.values.service)?.service ?? services[0]?.service ?? '';
  const [leaving, setLeaving] = useState(false);
  const connect = form.submit(async (values) => {
    const returnTo = new URL(screenPath(props.contractId, 'connections'), location.origin).toString();
    const { authorizationUrl: url } = await api.get<ConnectAnswer>(`/collection/credentials/connect/${encodeURIComponent(service)}`, {
      contract_id: props.contractId,
      return_to: returnTo,
      name: values.name.trim() || undefined,
      instance: service === 'mastodon' ? values.instance.trim() : undefined,
    });
    // Only to a web page: the service's consent page.
    if (!url || !/^https?:\/\//i.test(url)) throw new Error(`The connect flow of ${service} answered no web address.`);
    setLeaving(true);
    location.assign(url);
  });
  if (!services.length) return html`<p class="card">No service of this installation has a connect flow.</p>`;
  return html`<form class="card connections__form" aria-labelledby="connect-title" onSubmit=${connect}>
    <h2 id="connect-title">Connect an account</h2>
    <p class="muted">You sign in at the service and allow Sluice to read; the service sends you back here.</p>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="Service" name="service" autoFocus value=${service} options=${services.map((entry) => [entry.service, entry.service] as [string, string])} onInput=${form.set('service')} error=${form.error} />
      <${Field} label="Name" name="name" value=${form.values.name} onInput=${form.set('name')} error=${form.error} hint="Optional; default: the service and the date." />
    </div>
    ${service === 'mastodon'
      ? html`<${Field} label="instance" name="instance" required value=${form.values.instance} onInput=${form.set('instance')} error=${form.error} hint="Your Mastodon server, e.g. mastodon.social." />`
      : null}
    <${SubmitOrCancel} form=${form} label=${leaving ? `Opening ${service}…` : `Connect ${service}`} disabled=${leaving} onCancel=${props.onCancel} />
  </form>`;
}

function RenameForm({ credential, onDone }: { credential: Credential; onDone: (renamed?: Credential) => void }) {
  const form = useForm(`rename-credential:${credential._id}`, { name: credential.name });
  return html`<form class="connections__rename" onSubmit=${form.submit(async (values) => onDone(await api.patch<Credential>(`/collection/credentials/${credential._id}`, { name: values.name.trim() })))}>
    <${ErrorBanner} error=${form.formError} />
    <${Field} label=${`New name for ${credential.name}`} name="name" required autoFocus value=${form.values.name} onInput=${form.set('name')} error=${form.error} />
    <${SubmitOrCancel} form=${form} label="Save" onCancel=${() => onDone()} />
  </form>`;
}

// ---------------------------------------------------------------------------------------------
// One credential

function Health({ credential, now, fields }: { credential: Credential; now: number; fields: CredentialField[] }) {
  const { health, quota } = credential;
  // A token's expiry shows once: as health.expiresAt where the read has it, else as the field.
  const plain = fields.filter((field) => !field.secret && plainField(credential, field.name) !== undefined && !(field.name === 'expiresAt' && health.expiresAt));
  return html`<dl class="connections__facts">
    ${Object.entries(credential.hints).map(([name, hint]) => html`<div><dt>${name}</dt><dd><code>${hint}</code></dd></div>`)}
    ${plain.map((field) =>
      html`<div><dt>${field.name}</dt><dd>${field.name === 'expiresAt' ? html`<${When} iso=${plainField(credential, field.name)!} now=${now} />` : plainField(credential, field.name)}</dd></div>`,
    )}
    <div><dt>Connected by</dt><dd>${credential.connectedBy.name}, <${When} iso=${credential.connectedBy.date} now=${now} /></dd></div>
    <div><dt>Last used</dt><dd>${health.lastUsed ? html`<${When} iso=${health.lastUsed} now=${now} />` : 'not yet'}</dd></div>
    ${health.expiresAt ? html`<div><dt>Token expires</dt><dd><${When} iso=${health.expiresAt} now=${now} /></dd></div>` : null}
    ${health.lastError ? html`<div class="connections__error"><dt>Last error</dt><dd>${health.lastError}</dd></div>` : null}
    ${quota
      ? html`<div class=${quota.used >= quota.limit ? 'connections__error' : ''}>
          <dt>${quota.name}</dt>
          <dd>
            <meter min="0" max=${quota.limit} value=${Math.min(quota.used, quota.limit)} aria-hidden="true"></meter>
            <span>${quotaWords(quota, now)}</span>
          </dd>
        </div>`
      : null}
  </dl>`;
}

function CredentialCard(props: {
  credential: Credential;
  fields: CredentialField[];
  now: number;
  onChanged: (credential: Credential, reread?: boolean) => void;
  onDisconnect: (credential: Credential, button: HTMLButtonElement) => void;
}) {
  const { credential } = props;
  const [renaming, setRenaming] = useState(() => hasDraft(`rename-credential:${credential._id}`));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const rename = useRef<HTMLButtonElement>(null);
  const wasRenaming = useRef(renaming);
  useEffect(() => {
    if (wasRenaming.current && !renaming) rename.current?.focus();
    wasRenaming.current = renaming;
  }, [renaming]);

  // Buttons stay enabled while busy (a disabled button loses the focus); a second press waits.
  const patch = async (body: Record<string, unknown>, reread = false) => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      props.onChanged(await api.patch<Credential>(`/collection/credentials/${credential._id}`, body), reread);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const failed = credential.health.status === 'failed';
  const headingId = `credential-${credential._id}`;
  return html`<li>
    <article class=${`card connections__credential${credential.active ? '' : ' connections__credential--inactive'}${failed ? ' connections__credential--failed' : ''}`} aria-labelledby=${headingId}>
      <div class="connections__head">
        <h4 id=${headingId}>${credential.name}</h4>
        ${credential.default ? html`<span class="connections__tag">default</span>` : null}
        ${credential.active ? null : html`<span class="connections__tag connections__tag--muted">inactive</span>`}
        <span class=${`connections__tag connections__tag--${failed ? 'failed' : 'ok'}`}>${failed ? 'failed' : 'ok'}</span>
      </div>
      ${renaming
        ? html`<${RenameForm} credential=${credential} onDone=${(renamed?: Credential) => {
            setRenaming(false);
            if (renamed) props.onChanged(renamed);
          }} />`
        : null}
      <${Health} credential=${credential} now=${props.now} fields=${props.fields} />
      <div class="buttons">
        <button type="button" class="secondary" ref=${rename} aria-label=${`Rename ${credential.name}`} aria-expanded=${renaming ? 'true' : 'false'} onClick=${() => setRenaming(!renaming)}>Rename</button>
        ${credential.default ? null : html`<button type="button" class="secondary" aria-label=${`Make default: ${credential.name}`} onClick=${() => patch({ default: true }, true)}>Make default</button>`}
        <button type="button" class="secondary" aria-label=${`${credential.active ? 'Deactivate' : 'Activate'} ${credential.name}`} onClick=${() => patch({ active: !credential.active })}>${credential.active ? 'Deactivate' : 'Activate'}</button>
        <button type="button" class="danger" aria-label=${`Disconnect ${credential.name}`} onClick=${(event: Event) => props.onDisconnect(credential, event.currentTarget as HTMLButtonElement)}>Disconnect</button>
      </div>
      <${ErrorBanner} error=${error} />
    </article>
  </li>`;
}

/** The modal confirmation of a disconnect (native `<dialog>`: focus kept inside, Escape cancels). */
function ConfirmDisconnect({ credential, onClose }: { credential: Credential | undefined; onClose: (confirmed: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  // A layout effect: the dialog closes (and gives the focus back to its opener) during the commit,
  // before the screen's effect moves the focus where it belongs.
  useLayoutEffect(() => {
    const element = dialog.current;
    if (credential && element && !element.open) element.showModal();
    if (!credential && element?.open) element.close();
  }, [credential]);
  return html`<dialog ref=${dialog} class="connections__dialog" aria-labelledby="disconnect-title" aria-describedby="disconnect-text" onCancel=${(event: Event) => {
    event.preventDefault();
    onClose(false);
  }}>
    ${credential
      ? html`<h2 id="disconnect-title">Disconnect this credential?</h2>
          <p id="disconnect-text">Sluice forgets <strong>${credential.name}</strong> (${credential.service}) and its secret. Inputs of ${credential.service} that name no credential then use another default, or wait for one.</p>
          <div class="buttons">
            <button type="button" class="danger" onClick=${() => onClose(true)}>Disconnect credential</button>
            <button type="button" class="secondary" autofocus onClick=${() => onClose(false)}>Cancel</button>
          </div>`
      : null}
  </dialog>`;
}

// ---------------------------------------------------------------------------------------------
// The screen

export default function Connections() {
  const contractId = useContractId()!;
  const { query } = useRoute();
  const { route } = useLocation();
  const { contracts } = useSession();
  const contract = contracts?.find((c) => c._id === contractId);
  const [services, setServices] = useState<ServiceEntry[] | undefined>(undefined);
  const [credentials, setCredentials] = useState<Credential[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [now, setNow] = useState(() => Date.now());
  const [adding, setAdding] = useState<'add' | 'connect' | undefined>(() => (hasDraft('add-credential') ? 'add' : hasDraft('connect-account') ? 'connect' : undefined));
  const [disconnecting, setDisconnecting] = useState<{ credential: Credential; button: HTMLButtonElement } | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  const focusAfter = useRef<HTMLElement | null>(null);
  useEffect(() => {
    if (!disconnecting && focusAfter.current) {
      focusAfter.current.focus();
      focusAfter.current = null;
    }
  }, [disconnecting]);

  const load = useCallback(async () => {
    try {
      const [table, list] = await Promise.all([api.get<ServiceEntry[]>('/collection/services'), api.get<Credential[]>('/collection/credentials', { contract_id: contractId })]);
      setServices(table);
      setCredentials(list);
      setNow(Date.now());
      setError(undefined);
    } catch (caught) {
      setError(caught);
    }
  }, [contractId]);
  useEffect(() => {
    setCredentials(undefined);
    void load();
  }, [load]);

  // Back from a connect flow: say how it went, once, and leave the address clean.
  const returned = useMemo(
    () => ({ connected: query.credential_id, service: query.service, error: query.error ? query.error_description || query.error : undefined }),
    [],
  );
  useEffect(() => {
    if (returned.connected || returned.error) route(screenPath(contractId, 'connections'), true);
  }, []);
  const connected = returned.connected ? credentials?.find((c) => c._id === returned.connected) : undefined;

  const fieldsOf = (service: string) => {
    const entry = services?.find((e) => e.service === service);
    return entry ? entry.credentialFields : [];
  };

  const changed = (credential: Credential, reread = false) => {
    setCredentials((list) => list?.map((c) => (c._id === credential._id ? credential : c)));
    setNotice(`${credential.name} saved.`);
    if (reread) void load();
  };

  const confirmDisconnect = async (confirmed: boolean) => {
    const target = disconnecting;
    if (!target) return;
    if (!confirmed) {
      focusAfter.current = target.button;
      setDisconnecting(undefined);
      return;
    }
    try {
      await api.del(`/collection/credentials/${target.credential._id}`);
      focusAfter.current = heading.current;
      setDisconnecting(undefined);
      setActionError(undefined);
      setNotice(`${target.credential.name} disconnected.`);
      setCredentials((list) => list?.filter((c) => c._id !== target.credential._id));
    } catch (caught) {
      focusAfter.current = target.button;
      setDisconnecting(undefined);
      setActionError(caught);
    }
  };

  const toggle = (which: 'add' | 'connect') => (event: Event) => {
    opener.current = event.currentTarget as HTMLButtonElement;
    setAdding(adding === which ? undefined : which);
  };
  const closeForm = () => {
    setAdding(undefined);
    opener.current?.focus();
  };
  // Grouped by service, in the services table's order.
  const groups = (services ?? [])
    .map((entry) => ({ service: entry.service, list: (credentials ?? []).filter((c) => c.service === entry.service) }))
    .filter((group) => group.list.length);
  const others = (credentials ?? []).filter((c) => !services?.some((entry) => entry.service === c.service));
  if (others.length) groups.push({ service: 'other services', list: others });

  return html`<${Screen} title="Connections">
    <p class="connections__intro">
      Your contract’s own accounts at the services. An input uses the credential it names, else the
      default credential of its service. Secrets are stored encrypted and never shown again.
    </p>
    <${ErrorBanner} error=${error} />
    ${returned.error ? html`<div class="banner banner--error" role="alert"><p>${returned.service ?? 'The service'} was not connected: ${returned.error}</p></div>` : null}
    ${returned.connected ? html`<div class="banner connections__ok" role="status"><p>Connected ${connected ? html`<strong>${connected.name}</strong> (${connected.service})` : (returned.service ?? 'the account')}.</p></div>` : null}
    ${services === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
    ${services
      ? html`<div class="buttons connections__bar">
          <button type="button" aria-expanded=${adding === 'connect' ? 'true' : 'false'} onClick=${toggle('connect')}>Connect an account</button>
          <button type="button" class="secondary" aria-expanded=${adding === 'add' ? 'true' : 'false'} onClick=${toggle('add')}>Add credential</button>
        </div>`
      : null}
    ${services && adding === 'connect' ? html`<${ConnectForm} services=${services} contractId=${contractId} onCancel=${closeForm} />` : null}
    ${services && adding === 'add'
      ? html`<${AddForm} services=${services} contractId=${contractId} onDone=${(created?: Credential) => {
          closeForm();
          if (created) {
            setNotice(`${created.name} connected.`);
            void load();
          }
        }} />`
      : null}
    <p class="visually-hidden" role="status">${notice}</p>
    <${ErrorBanner} error=${actionError} />
    <h2 id="credentials-title" ref=${heading} tabindex="-1">Credentials${contract ? ` of ${contract.name}` : ''}</h2>
    ${credentials && !credentials.length ? html`<p>No credentials yet: add one, or connect an account. Until then, inputs use the installation’s own credentials where the operator shares them.</p>` : null}
    ${groups.map(
      (group) => html`<section class="connections__group" aria-labelledby=${`group-${group.service}`}>
        <h3 class="connections__group-title" id=${`group-${group.service}`}>${group.service}</h3>
        <ul class="connections__list">
          ${group.list.map(
            (credential) => html`<${CredentialCard} key=${credential._id} credential=${credential} fields=${fieldsOf(credential.service)} now=${now} onChanged=${changed}
              onDisconnect=${(target: Credential, button: HTMLButtonElement) => setDisconnecting({ credential: target, button })} />`,
          )}
        </ul>
      </section>`,
    )}
    <${ConfirmDisconnect} credential=${disconnecting?.credential} onClose=${confirmDisconnect} />
  <//>`;
}
