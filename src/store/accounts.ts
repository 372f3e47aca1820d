/** Accounts, their credits and the ledger. Money is integer micro-credits; times are Unix milliseconds. */

export interface AccountRecord {
  id: string;
  name: string;
  email: string | null;
  createdAt: number;
  hasPurchase: boolean;
  billingEmails: boolean;
  monthlySpendingLimit: number | null;
  /** Σ top-ups + grants − settled charges. */
  balance: number;
  /** Credits reserved by runs in flight. */
  held: number;
}

export interface NewAccount {
  name: string;
  email: string | null;
  createdAt: number;
  hasPurchase: boolean;
  billingEmails: boolean;
}

export interface AccountPatch {
  monthlySpendingLimit?: number | null;
  billingEmails?: boolean;
}

/** payment_refund: a card payment refunded (Stripe), debited from the balance. */
export type LedgerKind = 'topup' | 'grant' | 'hold' | 'settle' | 'refund' | 'payment_refund';

export interface LedgerEntry {
  id: number;
  accountId: string;
  keyId: string | null;
  jobId: string | null;
  kind: LedgerKind;
  /** Magnitude of the movement: credited (topup, grant), reserved (hold), charged (settle), released (refund). */
  amount: number;
  createdAt: number;
}

export interface AccountStore {
  createAccount(input: NewAccount): Promise<AccountRecord>;
  getAccount(id: string): Promise<AccountRecord | undefined>;
  updateAccount(id: string, patch: AccountPatch): Promise<AccountRecord | undefined>;
  /** A top-up (purchase: also lifts the trial rules at once) or a grant, as one ledger row. */
  addCredits(accountId: string, amount: number, kind: 'topup' | 'grant', at: number): Promise<AccountRecord | undefined>;
  /** Settled charges of the account since `since`. */
  accountSpentSince(accountId: string, since: number): Promise<number>;
  /** Newest first. */
  listLedger(accountId: string, limit: number): Promise<LedgerEntry[]>;
}
