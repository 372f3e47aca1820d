/**
 * Money is integer micro-credits (1 credit = 1,000,000 units; 1 credit = USD 0.01).
 * Decimal credits appear only at the JSON edge.
 */
export const MICRO_PER_CREDIT = 1_000_000;

/** Decimal credits from JSON → micro-credits (rounded to the nearest unit). */
export function creditsToMicro(credits: number): number {
  return Math.round(credits * MICRO_PER_CREDIT);
}

/** Micro-credits → decimal credits for JSON. */
export function microToCredits(micro: number): number {
  return micro / MICRO_PER_CREDIT;
}
