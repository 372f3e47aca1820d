/**
 * A refused hold → the error the client sees: the refusing row of the limit table
 * (src/store/limits.ts) gives the code, the message and whether X-Key-Limit-Reset is sent; the
 * status is the code's. The table's order is the spec's: credit hold (402), monthly spending
 * limit (402, its code differs by route), key credit limits (429 + X-Key-Limit-Reset), trial
 * rules (429).
 */
import { GatewayError } from '../shared/errors.ts';
import { iso } from '../shared/time.ts';
import { HOLD_LIMITS, limitOfRefusal, PERIODS, type HoldLimit } from '../store/limits.ts';
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

export function refusalError(refusal: HoldRefusal, quote: number, codes: RefusalCodes, now: number, limits: readonly HoldLimit[] = HOLD_LIMITS): GatewayError {
  const row = limitOfRefusal(limits, refusal);
  const { ceiling, used } = row.figures(refusal);
  const credits = (micro: number) => String(microToCredits(micro));
  const message = row.message({
    limit: credits(ceiling), used: credits(used), available: credits(Math.max(0, ceiling - used)), quote: credits(quote),
    holdMadeOf: codes.holdMadeOf, lowerBy: codes.lowerBy,
  });
  const code = row.code === 'route' ? codes.spendingLimit : row.code;
  if (row.resetHeader !== true || row.period === null) return new GatewayError(code, message);
  return new GatewayError(code, message, { headers: { 'x-key-limit-reset': iso(PERIODS[row.period].next(now)) } });
}
