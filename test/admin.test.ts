/** Admin API (DECISIONS.md) and the CLI over the same operations. */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startGateway, type TestGateway } from './helpers/gateway.ts';

const run = promisify(execFile);
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => gw.close());

describe('admin API', () => {
  it('creates an account and adds credits (purchase and grant), each a ledger row', async () => {
    const created = await gw.admin('POST', '/admin/v1/accounts', { name: 'Acme', email: 'ops@acme.test' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'Acme', email: 'ops@acme.test', has_purchase: false, billing_emails: true, balance_credits: 0 });
    const id = created.json.id;
    const granted = await gw.admin('POST', `/admin/v1/accounts/${id}/credits`, { credits: 2.5, purchase: false });
    expect(granted.json).toMatchObject({ balance_credits: 2.5, has_purchase: false });
    const bought = await gw.admin('POST', `/admin/v1/accounts/${id}/credits`, { credits: 10.000001, purchase: true });
    expect(bought.json).toMatchObject({ balance_credits: 12.500001, available_credits: 12.500001, held_credits: 0, has_purchase: true });
    const ledger = await gw.admin('GET', `/admin/v1/accounts/${id}/ledger`);
    expect(ledger.json.map((e: { kind: string; credits: number }) => [e.kind, e.credits])).toEqual([['topup', 10.000001], ['grant', 2.5]]);
    const zero = await gw.admin('POST', `/admin/v1/accounts/${id}/credits`, { credits: 0, purchase: true });
    expect(zero.status).toBe(400);
    expect(zero.json.error.code).toBe('validation_failed');
    expect(zero.json.error.details.fieldErrors.credits).toBeDefined();
  });

  it('imports an account with created_at and patches its spending limit', async () => {
    const created = await gw.admin('POST', '/admin/v1/accounts', { name: 'Old', created_at: '2025-01-02T03:04:05Z', has_purchase: true, billing_emails: false });
    expect(created.json).toMatchObject({ created_at: '2025-01-02T03:04:05.000Z', has_purchase: true, billing_emails: false });
    const patched = await gw.admin('PATCH', `/admin/v1/accounts/${created.json.id}`, { monthly_spending_limit_credits: 50 });
    expect(patched.json.monthly_spending_limit_credits).toBe(50);
    const cleared = await gw.admin('PATCH', `/admin/v1/accounts/${created.json.id}`, { monthly_spending_limit_credits: null });
    expect(cleared.json.monthly_spending_limit_credits).toBeNull();
    expect((await gw.admin('GET', '/admin/v1/accounts/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('creates a key: the secret is shown once, the list never shows it', async () => {
    const { accountId } = await gw.account();
    const created = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, {
      name: 'server', scopes: ['chat', 'embeddings'], requests_per_minute: 120, ip_allowlist: ['10.0.0.0/8'],
      daily_limit_credits: 5, monthly_limit_credits: 50, expires: '90d', warning_threshold: 0.5, email_alerts: true,
    });
    expect(created.status).toBe(201);
    expect(created.json.key).toMatch(/^svc_live_[0-9a-f]{64}$/);
    expect(created.json).toMatchObject({
      name: 'server', scopes: ['chat', 'embeddings'], requests_per_minute: 120, ip_allowlist: ['10.0.0.0/8'],
      daily_limit_credits: 5, monthly_limit_credits: 50, warning_threshold: 0.5, email_alerts: true,
    });
    const days = (Date.parse(created.json.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThan(90.1);
    const list = await gw.admin('GET', `/admin/v1/accounts/${accountId}/keys`);
    expect(list.text).not.toContain(created.json.key);
    expect(list.text).not.toContain(created.json.key.slice(20));
    const listed = list.json.find((k: { id: string }) => k.id === created.json.id);
    expect(listed.key).toBeUndefined();
    expect(created.json.key.startsWith(listed.key_prefix)).toBe(true);
  });

  it('the 21st active key is refused; a revoked key frees a place', async () => {
    const { accountId } = await gw.account(); // holds one key already
    const ids: string[] = [];
    for (let i = 2; i <= 20; i++) {
      const r = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: `k${i}` });
      expect(r.status).toBe(201);
      ids.push(r.json.id);
    }
    const refused = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'k21' });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toContain('20');
    await gw.admin('POST', `/admin/v1/keys/${ids[0]}/revoke`);
    expect((await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'k21' })).status).toBe(201);
  });

  it('patches limits; scopes, rate limit and allowlist are fixed at creation', async () => {
    const { keyId } = await gw.account();
    const patched = await gw.admin('PATCH', `/admin/v1/keys/${keyId}`, { name: 'renamed', daily_limit_credits: 3, monthly_limit_credits: null, warning_threshold: 0.9, email_alerts: true });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ name: 'renamed', daily_limit_credits: 3, monthly_limit_credits: null, warning_threshold: 0.9, email_alerts: true });
    for (const field of [{ scopes: ['all'] }, { requests_per_minute: 100 }, { ip_allowlist: [] }]) {
      const r = await gw.admin('PATCH', `/admin/v1/keys/${keyId}`, field);
      expect(r.status).toBe(400);
      expect(r.json.error.message).toContain('fixed at creation');
    }
  });

  it('revoke stops the key at once', async () => {
    const { key, keyId } = await gw.account();
    expect((await gw.api('/models?limit=1', { key })).status).toBe(200);
    const revoked = await gw.admin('POST', `/admin/v1/keys/${keyId}/revoke`);
    expect(revoked.json.status).toBe('revoked');
    expect((await gw.api('/models?limit=1', { key })).status).toBe(401);
  });

  it('rotate: old key 401 at once, new key works, settings carried', async () => {
    const { accountId } = await gw.account();
    const original = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, {
      name: 'rot', scopes: ['read', 'chat', 'jobs'], requests_per_minute: 90, ip_allowlist: ['127.0.0.1', '::1'],
      daily_limit_credits: 1, monthly_limit_credits: 10, expires: '2099-01-01', warning_threshold: 0.7, email_alerts: true,
    });
    expect((await gw.api('/models?limit=1', { key: original.json.key })).status).toBe(200);
    const rotated = await gw.admin('POST', `/admin/v1/keys/${original.json.id}/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.json.key).not.toBe(original.json.key);
    for (const field of ['name', 'scopes', 'requests_per_minute', 'ip_allowlist', 'daily_limit_credits', 'monthly_limit_credits', 'expires_at', 'warning_threshold', 'email_alerts']) {
      expect(rotated.json[field], field).toEqual(original.json[field]);
    }
    expect((await gw.api('/models?limit=1', { key: original.json.key })).status).toBe(401);
    expect((await gw.api('/models?limit=1', { key: rotated.json.key })).status).toBe(200);
    expect((await gw.admin('POST', `/admin/v1/keys/${original.json.id}/rotate`)).status).toBe(400);
    const usage = await gw.admin('GET', `/admin/v1/keys/${rotated.json.id}/usage`);
    expect(usage.json).toMatchObject({ day_credits: 0, month_credits: 0 });
    expect(Date.parse(usage.json.day_resets_at)).toBeGreaterThan(Date.now());
  });
});

describe('admin CLI', () => {
  it('runs the same operations against a running gateway and with --direct', async () => {
    const env = { ...process.env, ADMIN_TOKEN, GATEWAY_URL: gw.url, LOG_LEVEL: 'silent' };
    const cli = async (...args: string[]) => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'admin', ...args], { env });
      return JSON.parse(stdout);
    };
    // The two sequences are independent (a running gateway; a database of its own): they run side by side.
    const throughGateway = async () => {
      const account = await cli('accounts', 'create', '--name', 'CLI Co', '--email', 'cli@co.test');
      expect(account.name).toBe('CLI Co');
      // Credits and the key need only the account: both at once.
      const [topped, key] = await Promise.all([
        cli('credits', 'add', account.id, '--credits', '7.5', '--purchase'),
        cli('keys', 'create', account.id, '--name', 'cli key', '--scopes', 'read,chat,embeddings', '--rpm', '120', '--daily-limit', '2'),
      ]);
      expect(topped).toMatchObject({ balance_credits: 7.5, has_purchase: true });
      expect(key.key).toMatch(/^svc_live_/);
      expect(key.scopes).toEqual(['read', 'chat', 'embeddings']);
      expect((await gw.api('/models?limit=1', { key: key.key })).status).toBe(200);
      const rotated = await cli('keys', 'rotate', key.id);
      expect((await gw.api('/models?limit=1', { key: key.key })).status).toBe(401);
      await cli('keys', 'revoke', rotated.id);
      expect((await gw.api('/models?limit=1', { key: rotated.key })).status).toBe(401);
      const list = await cli('keys', 'list', account.id);
      expect(list).toHaveLength(2);
    };

    const direct = async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
      try {
        const directEnv = { ...env, DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` };
        const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'admin', '--direct', 'accounts', 'create', '--name', 'Direct'], { env: directEnv });
        const created = JSON.parse(stdout);
        const { stdout: got } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'admin', '--direct', 'accounts', 'get', created.id], { env: directEnv });
        expect(JSON.parse(got).name).toBe('Direct');
        // accounts list: the admin API's search, by name here.
        const { stdout: listed } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'admin', '--direct', 'accounts', 'list', '--search', 'direct', '--limit', '5'], { env: directEnv });
        expect(JSON.parse(listed).data.map((a: { id: string; name: string }) => [a.id, a.name])).toEqual([[created.id, 'Direct']]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    await Promise.all([throughGateway(), direct()]);
  }, 120_000); // ten CLI processes (at most three at once), each compiling the sources through tsx: slow on a busy machine

  it('--direct without DATABASE_URL, where the default database does not exist: exit 2 naming DATABASE_URL, no ./data/gateway.db made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-cli-nodb-'));
    try {
      const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'silent' };
      delete env.DATABASE_URL;
      const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
      const failed = await run(process.execPath, ['--import', import.meta.resolve('tsx'), main, 'admin', '--direct', 'ledger', '00000000-0000-4000-8000-000000000000'], { env, cwd: dir })
        .then(() => ({ code: 0, stderr: '' }), (error: { code: number; stderr: string }) => error);
      expect(failed.code).toBe(2);
      expect(failed.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^DATABASE_URL is not set: --direct opens the gateway's own database/)]);
      expect(existsSync(join(dir, 'data'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
