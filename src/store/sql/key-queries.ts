/** API keys and their families' usage counters (KeyStore) on Kysely. */
import type { Kysely, Selectable } from 'kysely';
import type { Scope } from '../../shared/scopes.ts';
import { startOfUtcDay, startOfUtcMonth } from '../../shared/time.ts';
import { HOLD_LIMITS, limitSettings, settingsFromRow, settingsToColumns, type HoldLimit, type LimitSetting } from '../limits.ts';
import type { ApiKeyPatch, ApiKeyRecord, CreateKeyResult, KeyStore, KeyUsage } from '../types.ts';
import type { ApiKeysTable, Database, Dialect } from './tables.ts';

export class SqlKeys implements KeyStore {
  private readonly settings: readonly LimitSetting[];

  constructor(private readonly db: Kysely<Database>, private readonly dialect: Dialect, limits: readonly HoldLimit[] = HOLD_LIMITS) {
    this.settings = limitSettings(limits, 'key');
  }

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
      await trx.insertInto('api_keys').values(fromKey(key, this.settings)).execute();
      await trx
        .insertInto('key_families')
        .values({ family_id: key.familyId, account_id: key.accountId, day_start: 0, day_used: 0, month_start: 0, month_used: 0 })
        .onConflict((oc) => oc.column('family_id').doNothing())
        .execute();
      return { ok: true, key } as const;
    });
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row === undefined ? undefined : toKey(row, this.settings);
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toKey(row, this.settings);
  }

  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'asc').execute();
    return rows.map((row) => toKey(row, this.settings));
  }

  async updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined> {
    const values: Partial<ApiKeysTable> = settingsToColumns(patch, this.settings);
    if (patch.name !== undefined) values.name = patch.name;
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
      await trx.insertInto('api_keys').values(fromKey(replacement, this.settings)).execute();
      return replacement;
    });
  }

  async keyFamilyUsage(familyId: string, at: number): Promise<KeyUsage> {
    const row = await this.db.selectFrom('key_families').selectAll().where('family_id', '=', familyId).executeTakeFirst();
    if (row === undefined) return { day: 0, month: 0 };
    return {
      day: Number(row.day_start) >= startOfUtcDay(at) ? Number(row.day_used) : 0,
      month: Number(row.month_start) >= startOfUtcMonth(at) ? Number(row.month_used) : 0,
    };
  }
}

/** A key's row as its record; the limit settings (dailyLimit… and any a later row adds) come from the limit table's columns. */
function toKey(row: Selectable<ApiKeysTable>, settings: readonly LimitSetting[]): ApiKeyRecord {
  return {
    ...(settingsFromRow(row, settings) as Pick<ApiKeyRecord, 'dailyLimit' | 'monthlyLimit'>),
    id: row.id,
    accountId: row.account_id,
    familyId: row.family_id,
    hash: row.hash,
    prefix: row.prefix,
    name: row.name,
    scopes: row.scopes === '' ? [] : (row.scopes.split(',') as Scope[]),
    requestsPerMinute: Number(row.requests_per_minute),
    ipAllowlist: JSON.parse(row.ip_allowlist) as string[],
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    warningThreshold: Number(row.warning_threshold),
    emailAlerts: Number(row.email_alerts) === 1,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

function fromKey(key: ApiKeyRecord, settings: readonly LimitSetting[]): ApiKeysTable {
  return {
    ...(settingsToColumns(key, settings) as Pick<ApiKeysTable, 'daily_limit' | 'monthly_limit'>),
    id: key.id,
    account_id: key.accountId,
    family_id: key.familyId,
    hash: key.hash,
    prefix: key.prefix,
    name: key.name,
    scopes: key.scopes.join(','),
    requests_per_minute: key.requestsPerMinute,
    ip_allowlist: JSON.stringify(key.ipAllowlist),
    expires_at: key.expiresAt,
    warning_threshold: key.warningThreshold,
    email_alerts: key.emailAlerts ? 1 : 0,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
  };
}
