/**
 * The Store on SQL (Kysely): one query path, two dialects.
 */
import { Kysely, Migrator, type Selectable, sql } from 'kysely';
import type { Scope } from '../../shared/scopes.ts';
import type {
  AccountPatch, AccountRecord, ApiKeyPatch, ApiKeyRecord, CreateKeyResult, HoldResult, JobRecord, JobStatus, LedgerEntry,
  LedgerKind, NewAccount, NewHold, Refund, Settlement, Store, InstanceRecord,
} from '../types.ts';
import { type Database, type Dialect, migrationProvider, type AccountsTable, type ApiKeysTable, type JobsTable } from './schema.ts';
import { randomUUID } from 'node:crypto';

export class SqlStore implements Store {
  readonly dialect: Dialect;
  readonly db: Kysely<Database>;
  private queries = 0;

  constructor(dialect: Dialect, build: (onQuery: () => void) => Kysely<Database>) {
    this.dialect = dialect;
    this.db = build(() => {
      this.queries++;
    });
  }

  get queryCount(): number {
    return this.queries;
  }

  async migrate(): Promise<void> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider(this.dialect) });
    const { error } = await migrator.migrateToLatest();
    if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  // ---- accounts and credits

  async createAccount(input: NewAccount): Promise<AccountRecord> {
    const row: AccountsTable = {
      id: randomUUID(),
      name: input.name,
      email: input.email,
      created_at: input.createdAt,
      has_purchase: input.hasPurchase ? 1 : 0,
      billing_emails: input.billingEmails ? 1 : 0,
      monthly_spending_limit: null,
      balance: 0,
      held: 0,
    };
    await this.db.insertInto('accounts').values(row).execute();
    return toAccount(row);
  }

  async getAccount(id: string): Promise<AccountRecord | undefined> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<AccountRecord | undefined> {
    const values: Partial<AccountsTable> = {};
    if (patch.monthlySpendingLimit !== undefined) values.monthly_spending_limit = patch.monthlySpendingLimit;
    if (patch.billingEmails !== undefined) values.billing_emails = patch.billingEmails ? 1 : 0;
    if (Object.keys(values).length > 0) await this.db.updateTable('accounts').set(values).where('id', '=', id).execute();
    return this.getAccount(id);
  }

  async addCredits(accountId: string, amount: number, kind: 'topup' | 'grant', at: number): Promise<AccountRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('accounts')
        .set((eb) => ({
          balance: eb('balance', '+', amount),
          ...(kind === 'topup' ? { has_purchase: 1 } : {}),
        }))
        .where('id', '=', accountId)
        .returningAll()
        .executeTakeFirst();
      if (updated === undefined) return undefined;
      await trx
        .insertInto('ledger')
        .values({ account_id: accountId, key_id: null, key_family_id: null, job_id: null, kind, amount, created_at: at })
        .execute();
      return toAccount(updated);
    });
  }

  async accountSpentSince(accountId: string, since: number): Promise<number> {
    const row = await this.db
      .selectFrom('ledger')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), sql<number>`0`).as('total'))
      .where('account_id', '=', accountId)
      .where('kind', '=', 'settle')
      .where('created_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async listLedger(accountId: string, limit: number): Promise<LedgerEntry[]> {
    const rows = await this.db
      .selectFrom('ledger')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      accountId: r.account_id,
      keyId: r.key_id,
      jobId: r.job_id,
      kind: r.kind as LedgerKind,
      amount: Number(r.amount),
      createdAt: Number(r.created_at),
    }));
  }

  // ---- holds and settlement (every movement one ledger row, in one transaction with the balance)

  async hold(hold: NewHold): Promise<HoldResult> {
    return this.db.transaction().execute(async (trx) => {
      // One conditional update: two concurrent holds can never both take the same credits.
      const reserved = await trx
        .updateTable('accounts')
        .set((eb) => ({ held: eb('held', '+', hold.amount) }))
        .where('id', '=', hold.accountId)
        .where(sql<boolean>`balance - held >= ${hold.amount}`)
        .executeTakeFirst();
      if (Number(reserved.numUpdatedRows) !== 1) {
        const account = await trx.selectFrom('accounts').select(['balance', 'held']).where('id', '=', hold.accountId).executeTakeFirst();
        return { ok: false, reason: 'insufficient_credits', available: account === undefined ? 0 : Number(account.balance) - Number(account.held) } as const;
      }
      await trx
        .insertInto('jobs')
        .values({
          id: hold.jobId, account_id: hold.accountId, key_id: hold.keyId, key_family_id: hold.keyFamilyId, kind: hold.kind,
          model: hold.model, status: 'running', held: hold.amount, cost: null, prompt_tokens: null, completion_tokens: null,
          error_code: null, instance_id: hold.instanceId, created_at: hold.at, finished_at: null,
        })
        .execute();
      await trx
        .insertInto('ledger')
        .values({ account_id: hold.accountId, key_id: hold.keyId, key_family_id: hold.keyFamilyId, job_id: hold.jobId, kind: 'hold', amount: hold.amount, created_at: hold.at })
        .execute();
      return { ok: true } as const;
    });
  }

  async settle(jobId: string, settlement: Settlement): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const job = await this.closeJob(trx, jobId, settlement.status, settlement.at);
      if (job === undefined) return 0;
      const held = Number(job.held);
      const charged = Math.min(Math.max(0, settlement.cost), held);
      await trx
        .updateTable('jobs')
        .set({ cost: charged, prompt_tokens: settlement.usage.prompt_tokens ?? null, completion_tokens: settlement.usage.completion_tokens ?? null })
        .where('id', '=', jobId)
        .execute();
      await trx
        .updateTable('accounts')
        .set((eb) => ({ held: eb('held', '-', held), balance: eb('balance', '-', charged) }))
        .where('id', '=', job.account_id)
        .execute();
      await trx
        .insertInto('ledger')
        .values({ account_id: job.account_id, key_id: job.key_id, key_family_id: job.key_family_id, job_id: jobId, kind: 'settle', amount: charged, created_at: settlement.at })
        .execute();
      return charged;
    });
  }

  async refund(jobId: string, refund: Refund): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const job = await this.closeJob(trx, jobId, refund.status, refund.at, refund.errorCode);
      if (job === undefined) return false;
      await this.release(trx, job, refund.at);
      return true;
    });
  }

  async getJob(id: string): Promise<JobRecord | undefined> {
    const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toJob(row);
  }

  async heartbeat(instance: { id: string; host: string; pid: number }, at: number): Promise<void> {
    await this.db
      .insertInto('gateway_instances')
      .values({ id: instance.id, host: instance.host, pid: instance.pid, heartbeat_at: at })
      .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: at }))
      .execute();
  }

  async listInstances(): Promise<InstanceRecord[]> {
    const rows = await this.db.selectFrom('gateway_instances').selectAll().execute();
    return rows.map((r) => ({ id: r.id, host: r.host, pid: Number(r.pid), heartbeatAt: Number(r.heartbeat_at) }));
  }

  async removeInstances(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.deleteFrom('gateway_instances').where('id', 'in', ids).execute();
  }

  async runningJobOwners(): Promise<string[]> {
    const rows = await this.db.selectFrom('jobs').select('instance_id').distinct().where('status', '=', 'running').execute();
    return rows.map((r) => r.instance_id);
  }

  async refundJobsOf(instanceIds: string[], at: number): Promise<number> {
    if (instanceIds.length === 0) return 0;
    const jobs = await this.db.selectFrom('jobs').select('id').where('status', '=', 'running').where('instance_id', 'in', instanceIds).execute();
    let refunded = 0;
    for (const job of jobs) if (await this.refund(job.id, { status: 'failed', errorCode: 'internal_error', at })) refunded++;
    return refunded;
  }

  /** Marks a running job finished; undefined when it was not running (settle and refund happen once). */
  private async closeJob(trx: Kysely<Database>, jobId: string, status: JobStatus, at: number, errorCode: string | null = null) {
    const closed = await trx
      .updateTable('jobs')
      .set({ status, finished_at: at, error_code: errorCode })
      .where('id', '=', jobId)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (Number(closed.numUpdatedRows) !== 1) return undefined;
    return trx.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
  }

  private async release(trx: Kysely<Database>, job: Selectable<JobsTable>, at: number): Promise<void> {
    const held = Number(job.held);
    await trx.updateTable('accounts').set((eb) => ({ held: eb('held', '-', held) })).where('id', '=', job.account_id).execute();
    await trx
      .insertInto('ledger')
      .values({ account_id: job.account_id, key_id: job.key_id, key_family_id: job.key_family_id, job_id: job.id, kind: 'refund', amount: held, created_at: at })
      .execute();
  }

  // ---- API keys

  async createKey(key: ApiKeyRecord, maxActive: number, now: number): Promise<CreateKeyResult> {
    return this.db.transaction().execute(async (trx) => {
      // Lock the account row so two concurrent creations cannot both pass the count (PostgreSQL);
      // SQLite transactions are already serialised.
      if (this.dialect === 'postgres') {
        await trx.selectFrom('accounts').select('id').where('id', '=', key.accountId).forUpdate().execute();
      }
      const active = await trx
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', key.accountId)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirstOrThrow();
      if (Number(active.n) >= maxActive) return { ok: false, reason: 'too_many_keys' } as const;
      await trx.insertInto('api_keys').values(fromKey(key)).execute();
      return { ok: true, key } as const;
    });
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row === undefined ? undefined : toKey(row);
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toKey(row);
  }

  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'asc')
      .execute();
    return rows.map(toKey);
  }

  async updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined> {
    const values: Partial<ApiKeysTable> = {};
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.dailyLimit !== undefined) values.daily_limit = patch.dailyLimit;
    if (patch.monthlyLimit !== undefined) values.monthly_limit = patch.monthlyLimit;
    if (patch.warningThreshold !== undefined) values.warning_threshold = patch.warningThreshold;
    if (patch.emailAlerts !== undefined) values.email_alerts = patch.emailAlerts ? 1 : 0;
    if (Object.keys(values).length > 0) await this.db.updateTable('api_keys').set(values).where('id', '=', id).execute();
    return this.getKey(id);
  }

  async revokeKey(id: string, at: number): Promise<ApiKeyRecord | undefined> {
    await this.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    return this.getKey(id);
  }

  async rotateKey(oldId: string, replacement: ApiKeyRecord, at: number): Promise<ApiKeyRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('api_keys')
        .set({ revoked_at: at })
        .where('id', '=', oldId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (Number(revoked.numUpdatedRows) !== 1) return undefined;
      await trx.insertInto('api_keys').values(fromKey(replacement)).execute();
      return replacement;
    });
  }

  async keyFamilyChargedSince(familyId: string, since: number): Promise<number> {
    // Per run: still running → the amount held; settled → its charge; refunded → 0.
    const row = await this.db
      .selectFrom('jobs')
      .select(sql<number>`coalesce(sum(case status when 'running' then held when 'failed' then 0 else coalesce(cost, 0) end), 0)`.as('total'))
      .where('key_family_id', '=', familyId)
      .where('created_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

}

function toJob(row: Selectable<JobsTable>): JobRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    kind: row.kind,
    model: row.model,
    status: row.status as JobStatus,
    held: Number(row.held),
    cost: row.cost === null ? null : Number(row.cost),
    promptTokens: row.prompt_tokens === null ? null : Number(row.prompt_tokens),
    completionTokens: row.completion_tokens === null ? null : Number(row.completion_tokens),
    errorCode: row.error_code,
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  };
}

function toAccount(row: Selectable<AccountsTable>): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    createdAt: Number(row.created_at),
    hasPurchase: Number(row.has_purchase) === 1,
    billingEmails: Number(row.billing_emails) === 1,
    monthlySpendingLimit: row.monthly_spending_limit === null ? null : Number(row.monthly_spending_limit),
    balance: Number(row.balance),
    held: Number(row.held),
  };
}

function toKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    familyId: row.family_id,
    hash: row.hash,
    prefix: row.prefix,
    name: row.name,
    scopes: row.scopes === '' ? [] : (row.scopes.split(',') as Scope[]),
    requestsPerMinute: Number(row.requests_per_minute),
    ipAllowlist: JSON.parse(row.ip_allowlist) as string[],
    dailyLimit: row.daily_limit === null ? null : Number(row.daily_limit),
    monthlyLimit: row.monthly_limit === null ? null : Number(row.monthly_limit),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    warningThreshold: Number(row.warning_threshold),
    emailAlerts: Number(row.email_alerts) === 1,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

function fromKey(key: ApiKeyRecord): ApiKeysTable {
  return {
    id: key.id,
    account_id: key.accountId,
    family_id: key.familyId,
    hash: key.hash,
    prefix: key.prefix,
    name: key.name,
    scopes: key.scopes.join(','),
    requests_per_minute: key.requestsPerMinute,
    ip_allowlist: JSON.stringify(key.ipAllowlist),
    daily_limit: key.dailyLimit,
    monthly_limit: key.monthlyLimit,
    expires_at: key.expiresAt,
    warning_threshold: key.warningThreshold,
    email_alerts: key.emailAlerts ? 1 : 0,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
  };
}
