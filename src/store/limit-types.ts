/**
 * The types of the limit table (limits.ts, which re-exports them): a row, what it reads, the facts a hold is decided on,
 * and the refusal the store answers.
 */
import type { ErrorCode } from '../shared/errors.ts';

/** The trial rules for accounts without a purchase (spec "Trial rules"). */
export interface TrialRules {
  /** A run whose hold is over this (micro-credits) is refused. */
  maxHold: number;
  /** More than this many runs in 24 hours is refused. */
  maxRunsPerDay: number;
  /** This many failures in a row, and the next run is refused. */
  maxFailuresInARow: number;
  /** More than this many trial runs per client address in 24 hours (across accounts) is refused. */
  maxRunsPerAddressPerDay: number;
  /** An account younger than this (ms) is refused. */
  minAccountAgeMs: number;
}

/**
 * Why a hold was refused, in the spec's order of checks: the first failing one answers.
 * Nothing is created or charged when a hold is refused.
 */
export type HoldRefusal =
  | { reason: 'insufficient_credits'; available: number }
  | { reason: 'spending_limit'; limit: number; spent: number }
  /** period: the key limit row's period adjective (daily, monthly, or a later row's). */
  | { reason: 'key_limit'; period: string; limit: number; used: number }
  /** rule: the trial rule's row name. */
  | { reason: 'trial'; rule: string };

export type PeriodName = 'hour' | 'day' | 'month';

export interface Period {
  /** As the refusal and the notifications name it: hourly, daily, monthly. */
  readonly adjective: string;
  start(at: number): number;
  /** The start of the next period: when a limit of this period frees up. */
  next(at: number): number;
  /** In the docs' table. */
  readonly doc: string;
}

/**
 * What a hold is checked against, as the process that owns the account's money sees it (the money
 * SQL reads the same from the rows it locks). Records of the store will do for the settings.
 */
export interface HoldFacts {
  /** Micro-credits the run holds. */
  amount: number;
  at: number;
  account: {
    balance: number;
    /** Every open hold of the account. */
    held: number;
    /** Settled charges of the UTC month of `at`. */
    monthSettled: number;
    hasPurchase: boolean;
    createdAt: number;
    /** Start times of the account's latest runs (trial rule), any order. */
    trialRuns: readonly number[];
    trialFailures: number;
    /** The account's settings by record field (an AccountRecord). */
    settings: object;
  };
  /**
   * The paying key when the run counts toward key limits (not for fine-tuning, not without a key):
   * its settings by record field (an ApiKeyRecord) and its family's usage in the current period of each.
   */
  key: { settings: object; used: Readonly<Partial<Record<PeriodName, number>>> } | null;
  /** Trial runs from the client address in the 24 hours before `at`; null when the address is unknown. */
  addressRuns: number | null;
}

/** One value a limit compares, in SQL over the locked rows and in TypeScript over the facts. */
export interface Reading {
  readonly sql: string;
  ts(facts: HoldFacts): number | null;
  /**
   * What this usage counts of the runs a process reserves in memory (SQLite, docs/money-path.md): the account's
   * open holds, or the key family's usage. The SQL adds the process's reservations to it; `ts` gets facts that
   * include them already.
   */
  readonly reserved?: 'held' | 'keyUse';
}

/** A limit an admin sets: a nullable micro-credit column of its owner's table (null: no limit). */
export interface LimitSetting {
  /** The store record's field (AccountRecord / ApiKeyRecord), and of its patch. */
  readonly field: string;
  /** The column of accounts (an account's limit) or api_keys (a key's). */
  readonly column: string;
  /** The admin API's, the portal's and the OpenAPI document's field, in decimal credits. */
  readonly api: string;
  /** The admin CLI's flag (`npm run admin -- … --<flag> CREDITS|null`). */
  readonly flag: string;
  readonly description: string;
}

/** What a refusal's message may say: credits as decimal strings, and the route's words. */
export interface MessageFacts {
  limit: string;
  used: string;
  available: string;
  /** What this request holds. */
  quote: string;
  /** What the hold is made of ("input estimate plus max_tokens output"). */
  holdMadeOf: string;
  /** How to need less ("lower max_tokens"). */
  lowerBy: string;
}

/** One row of the limit table: one check of the hold. */
export interface HoldLimit {
  /** Its name in the verdict and the docs (an SQL identifier). */
  readonly name: string;
  /** Whose limit: the account's, the key's (counted per key family), or a trial rule (accounts without a purchase). */
  readonly owner: 'account' | 'key' | 'trial';
  /** The period its usage counts in; null when it has none (or a sliding window, said in `counts`). */
  readonly period: PeriodName | null;
  /** The ceiling and what counts, in words (the docs' table). */
  readonly ceilingDoc: string;
  readonly counts: string;
  readonly ceiling: Reading;
  readonly used: Reading;
  /** What a run adds to the usage: its hold, one run, or nothing (the usage itself is compared). */
  readonly adds: 'amount' | 1 | 0;
  /** Checked last, against the client address's log, the one row the hold locks only when every other check passed. */
  readonly lastByAddress?: true;
  /** The error code; 'route' for the route's own spending-limit code (RefusalCodes.spendingLimit). */
  readonly code: ErrorCode | 'route';
  /** The answer carries X-Key-Limit-Reset: when the period frees up. */
  readonly resetHeader?: true;
  /** A key crossing its warning threshold of this limit, or refused by it, raises a notification. */
  readonly alerts?: true;
  readonly setting?: LimitSetting;
  /** The store's refusal (the money contract's shape) from the verdict's ceiling and usage. */
  answer(reading: { ceiling: number; used: number }): HoldRefusal;
  /** Whether a refusal is this row's. */
  matches(refusal: HoldRefusal): boolean;
  /** The ceiling and usage again from this row's refusal, as far as it tells them (its message's figures). */
  figures(refusal: HoldRefusal): { ceiling: number; used: number };
  message(facts: MessageFacts): string;
}
