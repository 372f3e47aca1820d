/**
 * The customer portal's routes (README "Customer portal"), the admin API's sign-in, session and
 * audit routes, and the Stripe webhook: one row each, as the other operation tables.
 */
import type { ErrorCode } from '../shared/errors.ts';
import { json, pathParam, type Json, type Operation } from './operation-parts.ts';

const ACCOUNT: Json = pathParam('accountId', 'Account id (an account of which the signed-in person is a member).');
const KEY: Json = pathParam('keyId', 'Key id (a key of that account).');
const SESSION: ErrorCode[] = ['not_signed_in', 'csrf_failed', 'account_not_found', 'internal_error'];
const OWNER: ErrorCode[] = [...SESSION, 'owner_only'];
const ADMIN: ErrorCode[] = ['invalid_admin_token', 'csrf_failed', 'internal_error'];
const object = json({ type: 'object' });
const BEFORE_ROUTING = { status: '4XX' as const, description: 'Only before routing: a request the HTTP server cannot read is refused by the server itself.' };

type Method = Operation['method'];

function portal(method: Method, tail: string, operationId: string, summary: string, description: string, errors: ErrorCode[], extra: Partial<Operation> = {}): Operation {
  const route = `/portal/api/accounts/:accountId${tail}`;
  return {
    method, route, path: route.replace(/:(\w+)/g, '{$1}'), operationId, summary, description, tag: 'Portal', security: 'portal',
    parameters: [ACCOUNT, ...(tail.includes(':keyId') ? [KEY] : []), ...(tail.includes(':email') ? [pathParam('email', 'The member\'s e-mail address.')] : [])],
    ok: [{ status: method === 'post' && !tail.includes(':keyId/revoke') ? 201 : method === 'delete' ? 204 : 200, description: summary, content: method === 'delete' ? undefined : object }],
    errors,
    ...extra,
  };
}

function open(method: Method, route: string, operationId: string, tag: string, summary: string, description: string, ok: Operation['ok'], errors: ErrorCode[], security: Operation['security'] = 'none'): Operation {
  return { method, route, path: route.replace(/:(\w+)/g, '{$1}'), operationId, summary, description, tag, security, ok, errors };
}

const html = { 'text/html': { schema: { type: 'string' } } };
const landing = (app: string): Operation['ok'] => [
  { status: 200, description: `Signed in: a page that moves on to ${app}.`, content: html },
  { status: 400, description: 'Not signed in: a page with the reason (no OIDC configured, a flow that ran out, an address that may not sign in).', content: html },
];
const page = (what: string): Operation['ok'] => [
  { status: 200, description: 'An HTML page.', content: html },
  { status: 503, description: `${what} is not built (\`npm run build\`).`, content: { 'text/plain': { schema: { type: 'string' } } } },
  { status: '4XX', description: 'Only before routing: a request the HTTP server cannot read is refused by the server itself.' },
];

export const PORTAL: Operation[] = [
  open('get', '/portal', 'getPortalPage', 'Portal', 'The customer portal', 'The built portal page (dist/portal); everything it shows comes from /portal/api with the session cookie.', page('The portal'), ['internal_error']),
  {
    ...open('get', '/portal/assets/*', 'getPortalAsset', 'Portal', 'A file of the portal', 'The built scripts and styles the page loads (names carry a content hash; cached for good).',
      [{ status: 200, description: 'The file.', content: { 'application/octet-stream': { schema: { type: 'string' } } } }, { status: 404, description: 'No such file.', content: { 'text/plain': { schema: { type: 'string' } } } }], []),
    path: '/portal/assets/{file}',
    parameters: [pathParam('file', 'File name, as the page names it.')],
  },
  open('get', '/portal/api/sign-in-options', 'portalSignInOptions', 'Portal', 'Sign-in options', '`{email, oidc}`: whether links can be mailed (SMTP_URL) and whether an OpenID Connect provider is configured.', [{ status: 200, description: 'The options.', content: object }, BEFORE_ROUTING], ['internal_error']),
  open('post', '/portal/api/sign-in/email', 'portalAskForLink', 'Portal', 'Ask for a sign-in link', 'The same 202 whoever the address belongs to; a single-use link valid for 15 minutes is mailed to members only. 5 an hour per address, 20 per client address.', [{ status: 202, description: '`{message}`.', content: object }], ['validation_failed', 'csrf_failed', 'sign_in_limited', 'internal_error']),
  open('post', '/portal/api/sign-in/link', 'portalRedeemLink', 'Portal', 'Sign in with a link', 'Redeems the link\'s token once: sets the session cookie and answers `{email, csrf_token, expires_at, accounts}`. A sign-in always mints a new session id.', [{ status: 200, description: 'The session.', content: object }], ['validation_failed', 'invalid_link', 'csrf_failed', 'internal_error']),
  open('get', '/portal/api/session', 'portalSession', 'Portal', 'The session', '`{email, csrf_token, expires_at, accounts: [{id, name, role}]}`.', [{ status: 200, description: 'The session.', content: object }], ['not_signed_in', 'internal_error'], 'portal'),
  open('post', '/portal/api/sign-out', 'portalSignOut', 'Portal', 'Sign out', 'Ends the session and clears its cookie.', [{ status: 204, description: 'Signed out.' }], ['csrf_failed', 'internal_error'], 'portal'),
  open('get', '/portal/api/sign-in/oidc', 'portalOidcStart', 'Portal', 'Start signing in through OpenID Connect', '`{url}`: the provider\'s authorization URL (code flow with PKCE) for the browser to open; the flow\'s cookie is set. 404 without OIDC_ISSUER.', [{ status: 200, description: 'The URL.', content: object }], ['not_found', 'upstream_error', 'internal_error']),
  open('get', '/portal/auth/oidc/callback', 'portalOidcCallback', 'Portal', 'OpenID Connect callback', 'The provider returns here: a verified e-mail address of a member gets a session and a page that moves on to the portal; anyone else a page with the reason.', landing('the portal'), ['internal_error']),
  portal('get', '', 'portalGetAccount', 'The account', 'As the admin API\'s account, plus `role`.', SESSION),
  portal('patch', '', 'portalUpdateAccount', 'Change the account', 'Owners: `{monthly_spending_limit_credits?, billing_emails?}`.', ['validation_failed', ...OWNER]),
  portal('get', '/members', 'portalListMembers', 'Members', '`{data: [{email, role, invited_by, created_at}]}`.', SESSION),
  portal('post', '/members', 'portalInviteMember', 'Invite a member', 'Owners: `{email, role?}`; the invitation mails a sign-in link valid for 72 hours.', ['validation_failed', 'invalid_request', ...OWNER]),
  portal('delete', '/members/:email', 'portalRemoveMember', 'Remove a member', 'Owners; never the last owner. Every portal session of the address ends.', ['member_not_found', 'invalid_request', ...OWNER]),
  portal('get', '/notifications', 'portalNotifications', 'Notifications', 'Limit notifications with the key\'s name.', SESSION),
  portal('get', '/ledger', 'portalLedger', 'The ledger as money', 'Rows that moved the balance, newest first, signed, each with `balance_after_credits`; `limit`, `before`.', ['validation_failed', ...SESSION]),
  portal('get', '/keys', 'portalListKeys', 'Keys', 'The account\'s keys without secrets, with `last_used_at`.', SESSION),
  portal('post', '/keys', 'portalCreateKey', 'Create a key', 'As the admin API\'s key creation; the secret is in this answer only.', ['validation_failed', ...SESSION]),
  portal('patch', '/keys/:keyId', 'portalUpdateKey', 'Edit a key', 'Name, limits, warning threshold, e-mail alerts.', ['validation_failed', 'key_not_found', ...SESSION]),
  portal('post', '/keys/:keyId/revoke', 'portalRevokeKey', 'Revoke a key', 'Stops the key at once.', ['key_not_found', ...SESSION]),
  portal('post', '/keys/:keyId/rotate', 'portalRotateKey', 'Rotate a key', 'A new key with the same settings; the old one stops.', ['key_not_found', 'invalid_request', ...SESSION]),
  portal('get', '/keys/:keyId/usage', 'portalKeyUsage', 'A key\'s usage', 'Credits used today and this month, and when they reset.', ['key_not_found', ...SESSION]),
  portal('get', '/usage', 'portalUsage', 'Usage', 'Totals and `by_day`, `by_model`, `by_key`: requests, errors, credits, prompt and completion tokens (`from`, `to`; default the last 30 days).', ['validation_failed', ...SESSION]),
  portal('get', '/jobs', 'portalJobLog', 'The request log', '`{data, next_cursor}` of this account (filters `key_id`, `model`, `status`, `code`; `cursor`, `limit`).', ['validation_failed', ...SESSION]),
  portal('get', '/jobs.csv', 'portalJobLogCsv', 'The request log as CSV', 'The same rows as CSV, up to 100,000.', ['validation_failed', ...SESSION], { ok: [{ status: 200, description: 'CSV.', content: { 'text/csv': { schema: { type: 'string' } } } }] }),
  portal('get', '/payments', 'portalPayments', 'Payments and receipts', '`{enabled, amounts_usd, data: [{id, amount_usd, credits, refunded_usd, receipt_url, created_at}]}`: whether credits can be bought, the amounts, and every payment with Stripe\'s receipt.', SESSION),
  portal('post', '/checkout', 'portalCheckout', 'Buy credits', 'Owners: `{amount_usd}` (one of TOPUP_AMOUNTS_USD) → 201 `{url}`: a Stripe Checkout page; 1 cent buys 1 credit. 404 without STRIPE_SECRET_KEY.', ['validation_failed', 'not_found', ...OWNER]),
  {
    ...open('post', '/webhooks/stripe', 'stripeWebhook', 'Payments', 'Stripe webhook', 'Stripe\'s events, verified by `Stripe-Signature` (300 s tolerance) over the raw body. A paid `checkout.session.completed` credits `amount_total` cents as credits to the account named by `client_reference_id`, once per session; `charge.refunded` debits what is newly refunded. Every verified event answers 200 `{received: true, outcome}` (`credited`, `already_credited`, `debited`, `ignored`). 404 without STRIPE_SECRET_KEY.',
      [{ status: 200, description: 'Received.', content: object }], ['invalid_request', 'not_found', 'internal_error']),
    parameters: [{ name: 'Stripe-Signature', in: 'header', required: true, description: '`t=<unix seconds>,v1=<HMAC-SHA256 of "t.body" with the endpoint secret>`.', schema: { type: 'string' } }],
    body: { required: true, content: json({ type: 'object', description: 'A Stripe event.' }) },
  },
  // The admin API's sign-in through OIDC, its session, and the audit log.
  open('get', '/admin/auth/options', 'adminSignInOptions', 'Admin', 'Dashboard sign-in options', '`{token, oidc}`.', [{ status: 200, description: 'The options.', content: object }, BEFORE_ROUTING], ['internal_error']),
  open('get', '/admin/auth/oidc', 'adminOidcStart', 'Admin', 'Start the dashboard\'s sign-in through OpenID Connect', '`{url}` for the browser to open. 404 without ADMIN_OIDC_EMAILS and an OIDC provider.', [{ status: 200, description: 'The URL.', content: object }], ['not_found', 'upstream_error', 'internal_error']),
  open('get', '/admin/auth/oidc/callback', 'adminOidcCallback', 'Admin', 'Dashboard OIDC callback', 'An address of ADMIN_OIDC_EMAILS gets a dashboard session and a page that moves on to the dashboard; anyone else a page with the reason.', landing('the dashboard'), ['internal_error']),
  open('post', '/admin/auth/sign-out', 'adminSignOut', 'Admin', 'Dashboard sign-out', 'Ends the dashboard\'s OIDC session.', [{ status: 204, description: 'Signed out.' }], ['csrf_failed', 'internal_error']),
  open('get', '/admin/v1/session', 'adminSession', 'Admin', 'Who is calling', '`{actor, email, csrf_token}`: the CSRF token of a dashboard signed in through OIDC.', [{ status: 200, description: 'The caller.', content: object }], ADMIN, 'admin'),
  open('get', '/admin/v1/audit', 'adminAudit', 'Admin', 'The audit log', 'Every admin change, newest first: `{data: [{id, at, actor, action, account_id, target, status, detail}], next_before}`.', [{ status: 200, description: 'A page of the log.', content: object }], ['validation_failed', ...ADMIN], 'admin'),
];

