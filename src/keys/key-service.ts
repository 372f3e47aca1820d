/**
 * Key lifecycle rules: creation (secret shown once, at most 20 active keys),
 * edits, revoke, rotate (same settings, old key off at the same moment, usage
 * carried by the key family). Every change is announced on KeyEvents so the caches
 * and in-flight runs of every gateway process react at once.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../shared/errors.ts';
import type { ApiKeyPatch, ApiKeyRecord, KeyStore } from '../store/types.ts';
import { startOfNextUtcDay, startOfNextUtcMonth } from '../shared/time.ts';
import type { KeyEvents } from './key-events.ts';
import { displayPrefix, generateKeySecret, hashKeySecret } from './key-secret.ts';

export const MAX_ACTIVE_KEYS = 20;

/** What a new key is created with; identity, secret and times are minted here. */
export type NewKeySettings = Pick<
  ApiKeyRecord,
  'name' | 'scopes' | 'requestsPerMinute' | 'ipAllowlist' | 'dailyLimit' | 'monthlyLimit' | 'expiresAt' | 'warningThreshold' | 'emailAlerts'
>;

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The full secret: returned here only, never stored. */
  secret: string;
}

export interface KeyUsage {
  day: number;
  month: number;
  dayResetsAt: number;
  monthResetsAt: number;
}

export class KeyService {
  constructor(
    private readonly store: KeyStore,
    private readonly events: KeyEvents,
    private readonly now: () => number = Date.now,
  ) {}

  async create(accountId: string, settings: NewKeySettings): Promise<IssuedKey> {
    const now = this.now();
    const id = randomUUID();
    const { record, secret } = this.mint({ ...settings, id, accountId, familyId: id, createdAt: now });
    const result = await this.store.createKey(record, MAX_ACTIVE_KEYS, now);
    if (!result.ok) {
      throw new GatewayError('validation_failed', `An account may have at most ${MAX_ACTIVE_KEYS} active keys. Revoke one first.`, {
        details: { formErrors: [`at most ${MAX_ACTIVE_KEYS} active keys per account`], fieldErrors: {} },
      });
    }
    await this.events.publish({ keyId: record.id, hash: record.hash, kind: 'created' });
    return { record, secret };
  }

  async update(keyId: string, patch: ApiKeyPatch): Promise<ApiKeyRecord> {
    await this.require(keyId);
    const updated = (await this.store.updateKey(keyId, patch)) as ApiKeyRecord;
    await this.events.publish({ keyId, hash: updated.hash, kind: 'updated' });
    return updated;
  }

  async revoke(keyId: string): Promise<ApiKeyRecord> {
    await this.require(keyId);
    const revoked = (await this.store.revokeKey(keyId, this.now())) as ApiKeyRecord;
    await this.events.publish({ keyId, hash: revoked.hash, kind: 'revoked' });
    return revoked;
  }

  async rotate(keyId: string): Promise<IssuedKey> {
    const old = await this.require(keyId);
    const now = this.now();
    if (old.revokedAt !== null || (old.expiresAt !== null && old.expiresAt <= now)) {
      throw new GatewayError('invalid_request', 'Only an active key can be rotated.');
    }
    const issued = this.mint({ ...old, id: randomUUID(), createdAt: now });
    const replaced = await this.store.rotateKey(old.id, issued.record, now);
    if (replaced === undefined) throw new GatewayError('invalid_request', 'Only an active key can be rotated.');
    await this.events.publish({ keyId: old.id, hash: old.hash, kind: 'revoked' });
    await this.events.publish({ keyId: issued.record.id, hash: issued.record.hash, kind: 'created' });
    return issued;
  }

  async usage(keyId: string): Promise<KeyUsage> {
    const key = await this.require(keyId);
    const now = this.now();
    const { day, month } = await this.store.keyFamilyUsage(key.familyId, now);
    return { day, month, dayResetsAt: startOfNextUtcDay(now), monthResetsAt: startOfNextUtcMonth(now) };
  }

  async require(keyId: string): Promise<ApiKeyRecord> {
    const key = await this.store.getKey(keyId);
    if (key === undefined) throw new GatewayError('key_not_found', `No key with id ${keyId}.`);
    return key;
  }

  private mint(base: NewKeySettings & { id: string; accountId: string; familyId: string; createdAt: number }): IssuedKey {
    const secret = generateKeySecret();
    const record: ApiKeyRecord = {
      // Every setting carries over, the limits of the limit table (src/store/limits.ts) included.
      ...base,
      hash: hashKeySecret(secret),
      prefix: displayPrefix(secret),
      scopes: [...base.scopes],
      ipAllowlist: [...base.ipAllowlist],
      revokedAt: null,
    };
    return { record, secret };
  }
}

/** "never", "30d", "90d", "1y", or an ISO 8601 date / date-time in the future. */
export function parseExpiry(value: string, now: number): { ok: true; expiresAt: number | null } | { ok: false; error: string } {
  switch (value) {
    case 'never':
      return { ok: true, expiresAt: null };
    case '30d':
      return { ok: true, expiresAt: now + 30 * 86_400_000 };
    case '90d':
      return { ok: true, expiresAt: now + 90 * 86_400_000 };
    case '1y': {
      const d = new Date(now);
      d.setUTCFullYear(d.getUTCFullYear() + 1);
      return { ok: true, expiresAt: d.getTime() };
    }
  }
  const isoDate = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const isoDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  const at = isoDate ? Date.parse(`${value}T00:00:00Z`) : isoDateTime ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) return { ok: false, error: 'must be "never", "30d", "90d", "1y", or an ISO 8601 date or date-time' };
  if (at <= now) return { ok: false, error: 'must be in the future' };
  return { ok: true, expiresAt: at };
}
