/**
 * Route schemas of the team of a contract (docs/api.md#team, docs/api.md#invitations) for the
 * OpenAPI description and request validation (TypeBox). Bodies are `handlerValidated`: the
 * handler checks them after authentication and the contract check, naming the property.
 */
import { Type } from 'typebox';
import { errorResponses, TOKEN_SECURITY } from '../../http/openapi.ts';
import { handlerValidated } from '../../http/validate.ts';
import { GRANT_ROLES } from '../../store/contracts.ts';
import { Id, IdParams, TokenQuery } from '../schemas.ts';

const tags = ['team'];
const security = TOKEN_SECURITY;

export const Role = Type.String({ enum: [...GRANT_ROLES], description: 'viewer < moderator < editor < admin < owner (docs/api.md#roles-and-scopes)' });

export const Member = Type.Object({
  consumerId: Id,
  role: Role,
  name: Type.String(),
  type: Type.String({ enum: ['user', 'client'] }),
  email: Type.Union([Type.String(), Type.Null()], { description: "the consumer's e-mail address" }),
  lastSignIn: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'the last password sign-in, accepted invitation or client_credentials token; null when not known' }),
  granted: Type.String({ format: 'date-time', description: 'when the grant was made' }),
  twoFactor: Type.Boolean({ description: 'whether the member has two-factor sign-in on (docs/api.md#two-factor-sign-in); false for a machine client' }),
});

export const MemberCreate = Type.Object({
  consumerId: { ...Id, description: 'an existing user or client (its consumer id)' },
  role: Role,
});

export const MemberUpdate = Type.Object({ role: Role });

export const Invitation = Type.Object({
  _id: Id,
  contractId: Id,
  name: Type.String(),
  email: Type.String(),
  role: Role,
  created: Type.String({ format: 'date-time' }),
  expires: Type.String({ format: 'date-time', description: '7 days after created' }),
  invitedBy: Type.String({ description: 'the name of the consumer who invited' }),
});

export const InvitationCreated = Type.Object({
  ...Invitation.properties,
  link: Type.String({ format: 'uri', description: 'the single-use link, shown this once: {auth_url}/v1/invitations/{token}' }),
  emailed: Type.Boolean({ description: 'whether the link was sent to `email` (SMTP_URL configured and the server accepted it)' }),
});

export const InvitationCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, description: "the invitee's name, as the team sees it" }),
  email: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$', description: "the invitee's e-mail address (the link is sent there when SMTP is configured)" }),
  role: Role,
});

export const PasswordResetCreated = Type.Object({
  _id: Id,
  consumerId: Id,
  contractId: Id,
  created: Type.String({ format: 'date-time' }),
  expires: Type.String({ format: 'date-time', description: '24 hours after created' }),
  issuedBy: Type.String({ description: 'the name of the consumer who issued it' }),
  link: Type.String({ format: 'uri', description: 'the single-use link, shown this once: {auth_url}/v1/password-reset/{token}' }),
  emailed: Type.Boolean({ description: "whether the link was sent to the member's e-mail address (SMTP_URL configured and the server accepted it)" }),
});

const ContractParams = IdParams;
const MemberParams = Type.Object({ id: Id, consumerId: Id });
const InvitationParams = Type.Object({ id: Id, invitationId: Id });

export const schemas = {
  listMembers: { tags, security, summary: "The contract's members with their roles", params: ContractParams, querystring: TokenQuery, response: { 200: Type.Array(Member), ...errorResponses(400, 401, 403, 404) } },
  addMember: {
    tags,
    security,
    summary: 'Grant an existing user or client the contract in a role',
    params: ContractParams,
    querystring: TokenQuery,
    body: handlerValidated(MemberCreate),
    response: { 201: Member, ...errorResponses(400, 401, 403, 404, 409, 413) },
  },
  updateMember: {
    tags,
    security,
    summary: "Change a member's role (the last owner cannot be demoted)",
    params: MemberParams,
    querystring: TokenQuery,
    body: handlerValidated(MemberUpdate),
    response: { 200: Member, ...errorResponses(400, 401, 403, 404, 409, 413) },
  },
  removeMember: {
    tags,
    security,
    summary: 'Remove a member (the last owner cannot be removed); their tokens are revoked when they hold no other grant',
    params: MemberParams,
    querystring: TokenQuery,
    response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(400, 401, 403, 404, 409) },
  },
  resetPassword: {
    tags,
    security,
    summary: "Issue a single-use password-reset link for a member who is a user, valid 24 hours, shown once (sent by e-mail when SMTP is configured)",
    params: MemberParams,
    querystring: TokenQuery,
    response: { 201: PasswordResetCreated, ...errorResponses(400, 401, 403, 404, 409) },
  },
  invite: {
    tags,
    security,
    summary: 'Invite someone by name and e-mail address in a role: a single-use link valid 7 days, shown once',
    params: ContractParams,
    querystring: TokenQuery,
    body: handlerValidated(InvitationCreate),
    response: { 201: InvitationCreated, ...errorResponses(400, 401, 403, 404, 413) },
  },
  listInvitations: { tags, security, summary: "The contract's pending invitations (never their links)", params: ContractParams, querystring: TokenQuery, response: { 200: Type.Array(Invitation), ...errorResponses(400, 401, 403, 404) } },
  withdraw: {
    tags,
    security,
    summary: 'Withdraw a pending invitation: its link stops working',
    params: InvitationParams,
    querystring: TokenQuery,
    response: { 204: Type.Null({ description: 'withdrawn' }), ...errorResponses(400, 401, 403, 404) },
  },
};
