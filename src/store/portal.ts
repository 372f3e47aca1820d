/**
 * What the customer portal keeps (DECISIONS.md "Customer portal and payments"): the members of
 * accounts, single-use sign-in links, sessions (the portal's and the admin dashboard's), the admin
 * audit log, and the portal's reads of an account (usage by day, model and key; the ledger as
 * money; when each key was last used). Secrets (link tokens, session ids) are kept only as
 * SHA-256 hashes. Times are Unix milliseconds, money integer micro-credits.
 */
import type { LedgerKind } from './accounts.ts';

export type MemberRole = 'owner' | 'member';

export interface MemberRecord {
  accountId: string;
  /** Lower-cased. */
  email: string;
  role: MemberRole;
  createdAt: number;
  /** Who invited them (null: the account's own address, its first owner). */
  invitedBy: string | null;
}

export interface MembershipRecord {
  accountId: string;
  accountName: string;
  role: MemberRole;
}

/** Whose a session is: a member of accounts in the portal, or an operator in the admin dashboard. */
export type SessionRealm = 'portal' | 'admin';

export interface SessionRecord {
  realm: SessionRealm;
  email: string;
  /** Sent back with every change (X-CSRF-Token). */
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface AuditEntry {
  id: number;
  at: number;
  /** `admin-token`, `oidc:<e-mail>` or `portal:<e-mail>`. */
  actor: string;
  /** `POST /admin/v1/accounts/:id/credits` */
  action: string;
  accountId: string | null;
  target: string | null;
  status: number;
  /** The request body as JSON (never a secret: the routes take none). */
  detail: string | null;
}

export type NewAuditEntry = Omit<AuditEntry, 'id'>;

export interface PortalUsageRow {
  /** Start of the UTC day, the model slug or the key id, by the grouping asked for. */
  group: string | number;
  requests: number;
  errors: number;
  credits: number;
  promptTokens: number;
  completionTokens: number;
}

export interface PortalUsage {
  byDay: PortalUsageRow[];
  byModel: PortalUsageRow[];
  byKey: PortalUsageRow[];
}

/** A ledger row that moved the balance, with the balance after it. */
export interface MoneyEntry {
  id: number;
  kind: LedgerKind;
  /** Signed: + credited, − charged or refunded to the card. */
  amount: number;
  balanceAfter: number;
  jobId: string | null;
  keyId: string | null;
  createdAt: number;
}

export interface PortalStore {
  addMember(member: MemberRecord): Promise<'added' | 'exists'>;
  /** False when there is no such member, or it is the account's last owner. */
  removeMember(accountId: string, email: string): Promise<'removed' | 'not_found' | 'last_owner'>;
  listMembers(accountId: string): Promise<MemberRecord[]>;
  membership(accountId: string, email: string): Promise<MemberRecord | undefined>;
  membershipsOf(email: string): Promise<MembershipRecord[]>;

  /** A sign-in link's token (its hash) for `email`, valid until `expiresAt`. */
  createLink(tokenHash: string, email: string, at: number, expiresAt: number): Promise<void>;
  /** Marks the link used and answers its e-mail address, once, before it expires; undefined otherwise. */
  redeemLink(tokenHash: string, at: number): Promise<string | undefined>;

  createSession(idHash: string, session: SessionRecord): Promise<void>;
  /** The session while it lives; undefined once expired or ended. */
  session(idHash: string, now: number): Promise<SessionRecord | undefined>;
  endSession(idHash: string): Promise<void>;
  /** Ends every session of `email` in `realm` (a removed member, signed out everywhere). */
  endSessionsOf(realm: SessionRealm, email: string): Promise<number>;

  audit(entry: NewAuditEntry): Promise<void>;
  /** Newest first; `before` (an id) pages back. */
  listAudit(options: { limit: number; before?: number }): Promise<AuditEntry[]>;

  /** The account's closed runs in [from, to), by UTC day, by model and by key. */
  usage(accountId: string, from: number, to: number): Promise<PortalUsage>;
  /** Rows that moved the balance, newest first, each with the balance after it; `before` (an id) pages back. */
  moneyLedger(accountId: string, options: { limit: number; before?: number }): Promise<MoneyEntry[]>;
  /** When each of these keys last started a run. */
  keysLastUsed(keyIds: string[]): Promise<Map<string, number>>;
}
