/**
 * The Team screen (`/console/contracts/<contract id>/team`), for the contract's admins and owners
 * (roles.ts; docs/api.md#team, docs/api.md#invitations):
 *
 * - the members (`GET /collection/contracts/{id}/members`) in a table: name (and e-mail
 *   address), role, last sign-in; each row's role is a select labelled "Role of <name>"
 *   (`PATCH …/members/{consumerId}`) and a Remove button asks in a modal dialog first
 *   (`DELETE …/members/{consumerId}`). The role rule is the API's: the roles offered are the
 *   user's own and those below it, and an admin sees an owner's row without controls; the last
 *   owner's controls are disabled with the reason beside them (the API refuses it with 409).
 * - **Invite** (`POST …/invitations`): name, e-mail address and role → the single-use link,
 *   shown this once with a Copy button, and whether it was e-mailed (`emailed`).
 * - per member who is a user (not oneself, not an owner's row for an admin): **Password reset
 *   link** (`POST …/members/{consumerId}/password-reset`, docs/api.md#password-reset) → its link,
 *   shown once like an invitation's (one component, `OnceLink`); whether each member has
 *   two-factor sign-in on (`twoFactor`).
 * - for owners, **Require two-factor sign-in** (`PUT /collection/contracts/{id}/two-factor`,
 *   docs/api.md#requiring-two-factor-sign-in), a switch; the API's refusal when the owner has not
 *   turned it on themself (403 naming `twoFactor`) shows with a link to the Account screen.
 * - the pending invitations (`GET …/invitations`), each with Withdraw (`DELETE
 *   …/invitations/{invitationId}`).
 *
 * An answer the API refuses is shown where it happened (ErrorBanner), with its own message.
 */
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBanner, Field, useForm } from '../forms.ts';
import { html } from '../html.ts';
import type { Answer } from '../resources.ts';
import { may, type Role, rolesUpTo, useRole } from '../roles.ts';
import { Screen } from '../screen.ts';
import { reloadContracts, useContractId, useSession } from '../session.ts';
import { absolute } from './sources-text.ts';

/** A member of the contract (docs/api.md#team). */
type Member = Answer<'/collection/contracts/{id}/members', 'get'>[number];
/** A pending invitation (docs/api.md#invitations). */
type Invitation = Answer<'/collection/contracts/{id}/invitations', 'get'>[number];
/** A new invitation, with its link shown this once. */
type Invited = Answer<'/collection/contracts/{id}/invitations', 'post', '201'>;
/** A new password-reset link, shown this once. */
type ResetIssued = Answer<'/collection/contracts/{id}/members/{consumerId}/password-reset', 'post', '201'>;

/** A single-use link shown this once (an invitation's or a password reset's): what `OnceLink` shows. */
interface Once {
  /** The heading, e.g. "Invitation for Mo". */
  title: string;
  /** The link field's label. */
  label: string;
  link: string;
  emailed: boolean;
  /** Who the link is for, and their e-mail address (null when none is known). */
  name: string;
  email: string | null;
  expires: string;
}

/** What each role may do, in a few words (docs/api.md#roles-and-scopes), for the role selects' hint. */
const ROLE_WORDS: Record<Role, string> = {
  viewer: 'reads the queue and the settings',
  moderator: 'also publishes, unpublishes, pins and edits items',
  editor: 'also manages sources, filters and the publication',
  admin: 'also manages connections and the team',
  owner: 'also deletes and exports the contract',
};

const LAST_OWNER = 'The last owner can be neither removed nor given another role: make another member owner first.';

const when = (iso: string | null) => (iso ? absolute.format(new Date(iso)) : 'never');

/** The modal confirmation of a removal (native `<dialog>`: focus kept inside, Escape cancels). */
function ConfirmRemove({ member, onClose }: { member: Member | undefined; onClose: (confirmed: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const element = dialog.current;
    if (member && element && !element.open) element.showModal();
    if (!member && element?.open) element.close();
  }, [member]);
  return html`<dialog ref=${dialog} class="team__dialog" aria-labelledby="remove-title" aria-describedby="remove-text" onCancel=${(event: Event) => {
    event.preventDefault();
    onClose(false);
  }}>
    ${member
      ? html`<h2 id="remove-title">Remove ${member.name}?</h2>
          <p id="remove-text"><strong>${member.name}</strong> loses access to this contract at once; when they have no other contract, their tokens are revoked too.</p>
          <div class="buttons">
            <button type="button" class="danger" onClick=${() => onClose(true)}>Remove member</button>
            <button type="button" class="secondary" autofocus onClick=${() => onClose(false)}>Cancel</button>
          </div>`
      : null}
  </dialog>`;
}

function MemberRow(props: { member: Member; myRole: Role; me: string | undefined; lastOwner: boolean; busy: boolean; onRole: (role: Role) => void; onRemove: () => void; onReset: () => void }) {
  const { member, myRole, lastOwner } = props;
  const reasonId = useId();
  // Only an owner changes or removes an owner (docs/api.md#team, role rule).
  const manageable = member.role !== 'owner' || may(myRole, 'owner');
  const offered = rolesUpTo(myRole);
  const locked = lastOwner || props.busy;
  return html`<tr>
    <th scope="row">
      <span class="team__label" aria-hidden="true">Name</span>
      <span class="team__name">${member.name}</span>${member.consumerId === props.me ? html` <span class="muted">(you)</span>` : null}
      ${member.email ? html`<br /><span class="muted team__email">${member.email}</span>` : null}
      ${member.type === 'client' ? html`<br /><span class="muted">machine client</span>` : null}
    </th>
    <td>
      <span class="team__label" aria-hidden="true">Role</span>
      ${manageable
        ? html`<select aria-label=${`Role of ${member.name}`} value=${member.role} disabled=${locked} aria-describedby=${lastOwner ? reasonId : undefined}
            onChange=${(event: Event) => props.onRole((event.currentTarget as HTMLSelectElement).value as Role)}>
            ${(offered.includes(member.role) ? offered : [...offered, member.role]).map((role) => html`<option value=${role}>${role}</option>`)}
          </select>`
        : html`<span>${member.role}</span>`}
    </td>
    <td><span class="team__label" aria-hidden="true">Last sign-in</span>${member.lastSignIn ? html`<time datetime=${member.lastSignIn}>${when(member.lastSignIn)}</time>` : 'never'}</td>
    <td><span class="team__label" aria-hidden="true">Two-factor</span>${member.type === 'client' ? html`<span class="muted">not for clients</span>` : member.twoFactor ? 'on' : 'off'}</td>
    <td>
      ${manageable
        ? html`<div class="buttons">
            <button type="button" class="secondary" disabled=${locked} aria-label=${`Remove ${member.name}`} aria-describedby=${lastOwner ? reasonId : undefined} onClick=${props.onRemove}>Remove</button>
            ${member.type === 'user' && member.consumerId !== props.me
              ? html`<button type="button" class="secondary" disabled=${props.busy} aria-label=${`Password reset link for ${member.name}`} onClick=${props.onReset}>Password reset link</button>`
              : null}
          </div>`
        : html`<span class="muted">Only an owner changes an owner.</span>`}
      ${lastOwner ? html`<p class="muted team__reason" id=${reasonId}>${LAST_OWNER}</p>` : null}
    </td>
  </tr>`;
}

/** The Invite form; the new invitation's link goes to `onInvited`. */
function InviteForm({ contractId, myRole, onInvited }: { contractId: string; myRole: Role; onInvited: (invited: Invited) => void }) {
  const form = useForm(`invite:${contractId}`, { name: '', email: '', role: 'viewer' });
  const offered = rolesUpTo(myRole);
  return html`<form class="card team__invite" aria-labelledby="invite-title" onSubmit=${form.submit(async (values) => onInvited(await api.post<Invited>(`/collection/contracts/${encodeURIComponent(contractId)}/invitations`, values)))}>
    <h2 id="invite-title">Invite</h2>
    <p class="muted">The invitee gets a single-use link, valid 7 days, to choose a user name and password.</p>
    <${ErrorBanner} error=${form.formError} />
    <div class="row">
      <${Field} label="Name" name="name" required value=${form.values.name} onInput=${form.set('name')} error=${form.error} />
      <${Field} label="E-mail address" name="email" type="email" required value=${form.values.email} onInput=${form.set('email')} error=${form.error} />
      <${Field} label="Role" name="role" value=${form.values.role} onInput=${form.set('role')} error=${form.error}
        hint=${`${form.values.role}: ${ROLE_WORDS[form.values.role as Role] ?? ''}`}
        options=${offered.map((role) => [role, role] as [string, string])} />
    </div>
    <button type="submit" disabled=${form.busy}>Invite</button>
  </form>`;
}

/** A single-use link (an invitation's, a password reset's), shown this once, with Copy; says whether it was e-mailed. */
function OnceLink({ once, onDone }: { once: Once; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState('');
  const id = useId();
  useEffect(() => heading.current?.focus(), [once]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(once.link);
      setCopied('Link copied.');
    } catch {
      field.current?.select();
      setCopied('Copying was refused by the browser: the link is selected, copy it with the keyboard.');
    }
  };
  return html`<section class="card team__link" aria-labelledby="link-title">
    <h2 id="link-title" ref=${heading} tabindex="-1">${once.title}</h2>
    <p>${once.emailed
      ? html`The link was e-mailed to <strong>${once.email}</strong>.`
      : html`The link was not e-mailed: pass it on to ${once.name}${once.email ? ` (${once.email})` : ''} yourself.`}
      ${' '}It works once, until ${when(once.expires)}, and is shown only now.</p>
    <div class="field">
      <label for=${id}>${once.label}</label>
      <div class="team__copy">
        <input id=${id} ref=${field} type="text" readonly value=${once.link} onFocus=${(event: Event) => (event.currentTarget as HTMLInputElement).select()} />
        <button type="button" onClick=${copy}>Copy</button>
      </div>
    </div>
    <p role="status" class="muted">${copied}</p>
    <button type="button" class="secondary" onClick=${onDone}>Done</button>
  </section>`;
}

/**
 * The owner's switch for the contract's two-factor requirement (docs/api.md#requiring-two-factor-sign-in),
 * with who it would stop; the API's refusal (the owner without two-factor, 403 naming `twoFactor`)
 * shows through `ErrorBanner`, which links the Account screen.
 */
function RequireTwoFactor({ contractId, members }: { contractId: string; members: Member[] }) {
  const { contracts } = useSession();
  const required = contracts?.find((contract) => contract._id === contractId)?.requireTwoFactor === true;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const explanation = useId();
  const users = members.filter((member) => member.type === 'user');
  const without = users.filter((member) => !member.twoFactor);
  const change = async (next: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await api.put(`/collection/contracts/${encodeURIComponent(contractId)}/two-factor`, { required: next });
      await reloadContracts();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return html`<section class="card" aria-labelledby="require-title">
    <h2 id="require-title">Two-factor sign-in</h2>
    <label class="team__switch">
      <input type="checkbox" role="switch" checked=${required} disabled=${busy} aria-describedby=${explanation}
        onChange=${(event: Event) => void change((event.currentTarget as HTMLInputElement).checked)} />
      Require two-factor sign-in
    </label>
    <p id=${explanation} class="muted">While it is required, members who sign in with a password can work on this contract only once they have turned two-factor sign-in on (on their Account screen); until then every request for this contract is refused with the reason. Machine clients are not affected. You need it on yourself to require it.
      ${' '}${without.length ? `Without it now: ${without.map((member) => member.name).join(', ')}.` : 'Every member who is a user has it on.'}</p>
    <${ErrorBanner} error=${error} />
  </section>`;
}

/** The screen of the module's description, for the contract of the address. */
export default function Team() {
  const contractId = useContractId()!;
  const myRole = useRole();
  const { me } = useSession();
  const base = `/collection/contracts/${encodeURIComponent(contractId)}`;
  const [members, setMembers] = useState<Member[] | undefined>(undefined);
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [error, setError] = useState<unknown>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const [removing, setRemoving] = useState<Member | undefined>(undefined);
  const [once, setOnce] = useState<Once | undefined>(undefined);
  const said = useRef<HTMLParagraphElement>(null);
  const [message, setMessage] = useState('');

  const load = useCallback(async () => {
    try {
      const [list, pending] = await Promise.all([api.get<Member[]>(`${base}/members`), api.get<Invitation[]>(`${base}/invitations`)]);
      setMembers(list);
      setInvitations(pending);
      setError(undefined);
    } catch (caught) {
      setError(caught);
    }
  }, [base]);
  useEffect(() => {
    setMembers(undefined);
    void load();
  }, [load]);

  const act = async (consumerId: string, work: () => Promise<string>) => {
    setBusy(consumerId);
    setActionError(undefined);
    let done = '';
    try {
      done = await work();
    } catch (caught) {
      setActionError(caught);
    }
    // The list as the server has it now (also after a refusal: the select shows the role kept).
    await load();
    setBusy(undefined);
    setMessage(done);
  };
  const changeRole = (member: Member, role: Role) =>
    act(member.consumerId, async () => {
      await api.patch(`${base}/members/${encodeURIComponent(member.consumerId)}`, { role });
      // One's own new role changes what the console shows (perhaps not this screen any more).
      if (member.consumerId === me?.consumer_id) await reloadContracts();
      return `${member.name} is now ${role}.`;
    });
  const remove = async (confirmed: boolean) => {
    const member = removing;
    setRemoving(undefined);
    if (!confirmed || !member) return;
    await act(member.consumerId, async () => {
      await api.del(`${base}/members/${encodeURIComponent(member.consumerId)}`);
      if (member.consumerId === me?.consumer_id) await reloadContracts();
      return `${member.name} was removed.`;
    });
    said.current?.focus();
  };
  const resetLink = (member: Member) =>
    act(member.consumerId, async () => {
      const issued = await api.post<ResetIssued>(`${base}/members/${encodeURIComponent(member.consumerId)}/password-reset`);
      setOnce({ title: `Password reset link for ${member.name}`, label: 'Password reset link', link: issued.link, emailed: issued.emailed, name: member.name, email: member.email, expires: issued.expires });
      return `A password reset link for ${member.name} was made.`;
    });
  const withdraw = (invitation: Invitation) =>
    act(invitation._id, async () => {
      await api.del(`${base}/invitations/${encodeURIComponent(invitation._id)}`);
      return `The invitation for ${invitation.name} was withdrawn.`;
    });

  const owners = members?.filter((member) => member.role === 'owner').length ?? 0;
  return html`<${Screen} title="Team">
    <${ErrorBanner} error=${error} />
    <p ref=${said} tabindex="-1" role="status" class="team__said">${message}</p>
    <${ErrorBanner} error=${actionError} />
    ${members === undefined && !error ? html`<p class="muted">Loading…</p>` : null}
    ${members && myRole
      ? html`<table class="team__table" aria-labelledby="members-title">
          <caption id="members-title">Members</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Last sign-in</th><th scope="col">Two-factor</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${members.map((member) => html`<${MemberRow} key=${member.consumerId} member=${member} myRole=${myRole} me=${me?.consumer_id}
              lastOwner=${member.role === 'owner' && owners <= 1} busy=${busy === member.consumerId}
              onRole=${(role: Role) => changeRole(member, role)} onRemove=${() => setRemoving(member)} onReset=${() => resetLink(member)} />`)}
          </tbody>
        </table>`
      : null}
    ${myRole
      ? once
        ? html`<${OnceLink} once=${once} onDone=${() => setOnce(undefined)} />`
        : html`<${InviteForm} contractId=${contractId} myRole=${myRole} onInvited=${(created: Invited) => {
            setOnce({ title: `Invitation for ${created.name}`, label: 'Invitation link', link: created.link, emailed: created.emailed, name: created.name, email: created.email, expires: created.expires });
            void load();
          }} />`
      : null}
    ${invitations.length
      ? html`<section aria-labelledby="pending-title">
          <h2 id="pending-title">Pending invitations</h2>
          <ul class="team__pending">
            ${invitations.map((invitation) => html`<li key=${invitation._id}>
              <span><strong>${invitation.name}</strong> <span class="muted">${invitation.email} · ${invitation.role} · until ${when(invitation.expires)} · by ${invitation.invitedBy}</span></span>
              <button type="button" class="secondary" disabled=${busy === invitation._id} aria-label=${`Withdraw the invitation for ${invitation.name}`} onClick=${() => withdraw(invitation)}>Withdraw</button>
            </li>`)}
          </ul>
        </section>`
      : null}
    ${members && may(myRole, 'owner') ? html`<${RequireTwoFactor} contractId=${contractId} members=${members} />` : null}
    <${ConfirmRemove} member=${removing} onClose=${remove} />
  <//>`;
}
