/**
 * A refused hold → the error the client sees, in the spec's order of checks: credit
 * hold (402), monthly spending limit (402, its code differs by route), key credit
 * limits (429 + X-Key-Limit-Reset), trial rules (429).
 */
import { GatewayError } from '../shared/errors.ts';
import { iso, startOfNextUtcDay, startOfNextUtcMonth } from '../shared/time.ts';
import type { HoldRefusal } from '../store/money-contract.ts';
import { microToCredits } from './money.ts';

/** What differs between routes when a hold is refused. */
export interface RefusalCodes {
  /** chat: spending_limit_reached; every other billed route: monthly_limit_exceeded. */
  spendingLimit: 'spending_limit_reached' | 'monthly_limit_exceeded';
  /** What the hold is made of, for the 402 message ("input estimate plus max_tokens output"). */
  holdMadeOf: string;
  /** How to need less ("lower max_tokens"). */
  lowerBy: string;
}

const TRIAL_MESSAGES: Record<Extract<HoldRefusal, { reason: 'trial' }>['rule'], string> = {
  hold_too_large: 'Trial accounts may hold at most 2 credits per run.',
  runs_per_day: 'Trial accounts may make at most 5 runs in 24 hours.',
  failures_in_a_row: 'Trial accounts are paused after 3 failed runs in a row.',
  runs_per_address: 'At most 8 trial runs per client address in 24 hours.',
  account_too_new: 'Trial accounts can run models 24 hours after they are created.',
};

export function refusalError(refusal: HoldRefusal, quote: number, codes: RefusalCodes, now: number): GatewayError {
  switch (refusal.reason) {
    case 'insufficient_credits':
      return new GatewayError(
        'insufficient_credits',
        `Insufficient credits: this request holds ${microToCredits(quote)} credits (${codes.holdMadeOf}) and ${microToCredits(Math.max(0, refusal.available))} are available. Top up, or ${codes.lowerBy}.`,
      );
    case 'spending_limit':
      return new GatewayError(
        codes.spendingLimit,
        `The account's monthly spending limit of ${microToCredits(refusal.limit)} credits would be exceeded (${microToCredits(refusal.spent)} spent or held this month; this request holds ${microToCredits(quote)}).`,
      );
    case 'key_limit': {
      const resetAt = refusal.period === 'daily' ? startOfNextUtcDay(now) : startOfNextUtcMonth(now);
      return new GatewayError(
        'api_key_limit_exceeded',
        `This API key's ${refusal.period} credit limit of ${microToCredits(refusal.limit)} credits would be exceeded (${microToCredits(refusal.used)} used; this request holds ${microToCredits(quote)}). Nothing was charged.`,
        { headers: { 'x-key-limit-reset': iso(resetAt) } },
      );
    }
    case 'trial':
      return new GatewayError('trial_limit', `${TRIAL_MESSAGES[refusal.rule]} A top-up lifts the trial rules.`);
  }
}
