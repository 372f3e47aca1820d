/**
 * The limit table's settings (src/store/limits.ts) at the JSON edge: the admin API's and the
 * portal's fields (decimal credits, null for no limit), their validation, and the views' values.
 * A row with a setting appears in every body and answer of its owner (account or key) through these.
 */
import { z } from 'zod';
import { creditsToMicro, microToCredits } from '../billing/money.ts';
import { limitSettings, settingOf, type HoldLimit } from '../store/limits.ts';

const credits = z.number().finite().nonnegative().max(1e12);
/** A limit in a request body: decimal credits, null for none, absent to leave it. */
export const limitCredits = credits.nullable().optional();

/** Decimal credits → micro-credits, keeping undefined (not sent) and null (no limit) apart. */
export const microOrNull = (value: number | null | undefined) => (value === undefined ? undefined : value === null ? null : creditsToMicro(value));

/** The request fields of the owner's limits, each validated as a limit. */
export function limitBodyFields(limits: readonly HoldLimit[], owner: 'account' | 'key') {
  return Object.fromEntries(limitSettings(limits, owner).map((s) => [s.api, limitCredits.describe(s.description)]));
}

/** The answer fields of the owner's limits (decimal credits or null). */
export function limitViewFields(limits: readonly HoldLimit[], owner: 'account' | 'key') {
  return Object.fromEntries(limitSettings(limits, owner).map((s) => [s.api, z.number().nullable().describe(s.description)]));
}

/** A parsed body's limits as a store patch (record fields; undefined: not sent). */
export function limitPatch(limits: readonly HoldLimit[], owner: 'account' | 'key', body: Readonly<Record<string, unknown>>): Record<string, number | null | undefined> {
  return Object.fromEntries(limitSettings(limits, owner).map((s) => [s.field, microOrNull(body[s.api] as number | null | undefined)]));
}

/** A record's limits as its answer's fields. */
export function limitView(limits: readonly HoldLimit[], owner: 'account' | 'key', record: object): Record<string, number | null> {
  return Object.fromEntries(limitSettings(limits, owner).map((s) => {
    const value = settingOf(record, s) ?? null;
    return [s.api, value === null ? null : microToCredits(value)];
  }));
}
