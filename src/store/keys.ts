/** API keys and their families' usage. Money is integer micro-credits; times are Unix milliseconds. */
import type { Scope } from '../shared/scopes.ts';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  /** Shared by a key and every key rotated from it: usage counts per family. */
  familyId: string;
  /** SHA-256 of the secret, hex. */
  hash: string;
  /** First characters of the secret, for display. */
  prefix: string;
  name: string;
  scopes: Scope[];
  requestsPerMinute: number;
  ipAllowlist: string[];
  dailyLimit: number | null;
  monthlyLimit: number | null;
  expiresAt: number | null;
  warningThreshold: number;
  emailAlerts: boolean;
  createdAt: number;
  revokedAt: number | null;
}

export interface ApiKeyPatch {
  name?: string;
  dailyLimit?: number | null;
  monthlyLimit?: number | null;
  warningThreshold?: number;
  emailAlerts?: boolean;
}

export type CreateKeyResult = { ok: true; key: ApiKeyRecord } | { ok: false; reason: 'too_many_keys' };

/** What a key family's runs count toward its limits: open holds at the amount held, settled runs at cost, refunded at 0. */
export interface KeyUsage {
  /** In the UTC day of `at`. */
  day: number;
  /** In the UTC calendar month of `at`. */
  month: number;
}

export interface KeyStore {
  /** Inserts the key unless the account already has `maxActive` active keys at `now`. */
  createKey(key: ApiKeyRecord, maxActive: number, now: number): Promise<CreateKeyResult>;
  findKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  updateKey(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | undefined>;
  revokeKey(id: string, at: number): Promise<ApiKeyRecord | undefined>;
  /** Deactivates `oldId` and inserts `replacement` (same family: usage carries over) in one transaction. */
  rotateKey(oldId: string, replacement: ApiKeyRecord, at: number): Promise<ApiKeyRecord | undefined>;
  /** The counters the key limits are checked against. */
  keyFamilyUsage(familyId: string, at: number): Promise<KeyUsage>;
}
