/**
 * The admin CLI: each command is one admin API call, printed as JSON.
 * By default it calls a running gateway (GATEWAY_URL, ADMIN_TOKEN), so revocations
 * reach that gateway's caches at once; `--direct` opens DATABASE_URL in-process
 * and sends the same call through the same routes (no gateway needs to run).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { DEFAULT_DATABASE_URL, loadConfig } from '../config.ts';
import { createGateway } from '../gateway.ts';
import { HOLD_LIMITS, limitSettings } from '../store/limits.ts';

export interface AdminCall {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: Record<string, unknown>;
}

/** The limit flags of an account's or a key's command, from the limit table (src/store/limits.ts). */
const limitFlags = (owner: 'account' | 'key', value: string) => limitSettings(HOLD_LIMITS, owner).map((s) => `[--${s.flag} ${value}]`).join(' ');

const USAGE = `Usage: npm run admin -- [--direct] <command>
  accounts create --name NAME [--email E] [--has-purchase] [--no-billing-emails] [--created-at ISO]
  accounts get ACCOUNT_ID
  accounts patch ACCOUNT_ID ${limitFlags('account', 'CREDITS|null')} [--billing-emails true|false]
  credits add ACCOUNT_ID --credits N [--purchase]
  keys create ACCOUNT_ID --name NAME [--scopes read,chat] [--rpm N] [--allow IP,CIDR] ${limitFlags('key', 'N')} [--expires never|30d|90d|1y|ISO] [--warning 0.8] [--email-alerts]
  keys list ACCOUNT_ID
  keys patch KEY_ID [--name N] ${limitFlags('key', 'N|null')} [--warning X] [--email-alerts true|false]
  keys revoke KEY_ID
  keys rotate KEY_ID
  keys usage KEY_ID
  ledger ACCOUNT_ID
  notifications ACCOUNT_ID
Environment: GATEWAY_URL (default http://127.0.0.1:$PORT), ADMIN_TOKEN; with --direct, DATABASE_URL.`;

export class UsageError extends Error {}

/** argv (after the command words) → the admin API call. */
export function parseAdminCommand(argv: string[]): AdminCall {
  const words: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
    const next = argv[i + 1];
    if (inline !== undefined) flags.set(name, inline);
    else if (next !== undefined && !next.startsWith('--')) {
      flags.set(name, next);
      i++;
    } else flags.set(name, 'true');
  }
  const [group, action, id] = words;
  const need = (what: string) => {
    if (id === undefined) throw new UsageError(`${group} ${action} needs ${what}\n\n${USAGE}`);
    return encodeURIComponent(id);
  };
  const body: Record<string, unknown> = {};
  const set = (flag: string, field: string, convert: (v: string) => unknown) => {
    const value = flags.get(flag);
    if (value !== undefined) body[field] = convert(value);
  };
  const num = (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new UsageError(`'${v}' is not a number`);
    return n;
  };
  const numOrNull = (v: string) => (v === 'null' || v === 'none' ? null : num(v));
  const bool = (v: string) => v !== 'false';
  const setLimits = (owner: 'account' | 'key') => {
    for (const s of limitSettings(HOLD_LIMITS, owner)) set(s.flag, s.api, numOrNull);
  };
  const list = (v: string) => v.split(',').map((s) => s.trim()).filter((s) => s !== '');

  switch (`${group} ${action}`) {
    case 'accounts create':
      set('name', 'name', String);
      set('email', 'email', String);
      set('created-at', 'created_at', String);
      set('has-purchase', 'has_purchase', bool);
      if (flags.has('no-billing-emails')) body.billing_emails = false;
      return { method: 'POST', path: '/admin/v1/accounts', body };
    case 'accounts get':
      return { method: 'GET', path: `/admin/v1/accounts/${need('ACCOUNT_ID')}` };
    case 'accounts patch':
      setLimits('account');
      set('billing-emails', 'billing_emails', bool);
      return { method: 'PATCH', path: `/admin/v1/accounts/${need('ACCOUNT_ID')}`, body };
    case 'credits add':
      set('credits', 'credits', num);
      body.purchase = flags.has('purchase') && bool(flags.get('purchase') as string);
      return { method: 'POST', path: `/admin/v1/accounts/${need('ACCOUNT_ID')}/credits`, body };
    case 'keys create':
      set('name', 'name', String);
      set('scopes', 'scopes', list);
      set('rpm', 'requests_per_minute', num);
      set('allow', 'ip_allowlist', list);
      setLimits('key');
      set('expires', 'expires', String);
      set('warning', 'warning_threshold', num);
      set('email-alerts', 'email_alerts', bool);
      return { method: 'POST', path: `/admin/v1/accounts/${need('ACCOUNT_ID')}/keys`, body };
    case 'keys list':
      return { method: 'GET', path: `/admin/v1/accounts/${need('ACCOUNT_ID')}/keys` };
    case 'keys patch':
      set('name', 'name', String);
      setLimits('key');
      set('warning', 'warning_threshold', num);
      set('email-alerts', 'email_alerts', bool);
      return { method: 'PATCH', path: `/admin/v1/keys/${need('KEY_ID')}`, body };
    case 'keys revoke':
      return { method: 'POST', path: `/admin/v1/keys/${need('KEY_ID')}/revoke` };
    case 'keys rotate':
      return { method: 'POST', path: `/admin/v1/keys/${need('KEY_ID')}/rotate` };
    case 'keys usage':
      return { method: 'GET', path: `/admin/v1/keys/${need('KEY_ID')}/usage` };
  }
  if (group === 'ledger' || group === 'notifications') {
    if (action === undefined) throw new UsageError(`${group} needs ACCOUNT_ID\n\n${USAGE}`);
    return { method: 'GET', path: `/admin/v1/accounts/${encodeURIComponent(action)}/${group}` };
  }
  throw new UsageError(USAGE);
}

export interface AdminResult {
  status: number;
  body: unknown;
}

/** Runs one CLI invocation; returns the process exit code. */
export async function runAdminCli(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  const direct = argv.includes('--direct');
  let call: AdminCall;
  try {
    call = parseAdminCommand(argv.filter((a) => a !== '--direct'));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  const result = direct ? await callDirect(call, env) : await callRemote(call, env);
  console.log(JSON.stringify(result.body, null, 2));
  return result.status < 400 ? 0 : 1;
}

async function callRemote(call: AdminCall, env: Record<string, string | undefined>): Promise<AdminResult> {
  const token = env.ADMIN_TOKEN;
  if (token === undefined || token === '') throw new UsageError('ADMIN_TOKEN is not set (or use --direct with DATABASE_URL).');
  const base = env.GATEWAY_URL ?? `http://127.0.0.1:${env.PORT ?? '8080'}`;
  const response = await fetch(new URL(call.path, base), {
    method: call.method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
  return { status: response.status, body: await response.json() };
}

/**
 * The database --direct opens: DATABASE_URL, or unset, the gateway's default when that database exists.
 * Never a new empty one made by mistake (it would answer account_not_found for every id).
 */
function directDatabase(env: Record<string, string | undefined>): string {
  const set = env.DATABASE_URL;
  if (set !== undefined && set !== '') return set;
  const path = DEFAULT_DATABASE_URL.slice('sqlite:'.length);
  if (existsSync(path)) return DEFAULT_DATABASE_URL;
  throw new UsageError(`DATABASE_URL is not set: --direct opens the gateway's own database, so set DATABASE_URL as the gateway has it (the default, ${DEFAULT_DATABASE_URL}, does not exist here).`);
}

async function callDirect(call: AdminCall, env: Record<string, string | undefined>): Promise<AdminResult> {
  const token = randomBytes(24).toString('hex');
  const database = directDatabase(env);
  const gateway = await createGateway(loadConfig({ ...env, DATABASE_URL: database, ADMIN_TOKEN: token, LOG_LEVEL: env.LOG_LEVEL ?? 'warn' }));
  try {
    const response = await gateway.app.inject({
      method: call.method,
      url: call.path,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: call.body === undefined ? undefined : JSON.stringify(call.body),
    });
    return { status: response.statusCode, body: response.json() };
  } finally {
    await gateway.close();
  }
}
