/**
 * Exact decimal arithmetic for prices: decimal strings become BigInts scaled by 10^12,
 * so no float touches a price before JSON formatting.
 */
export const SCALE_DIGITS = 12;
export const SCALE = 10n ** BigInt(SCALE_DIGITS);

/** "1.25" → 1_250_000_000_000n */
export function parseDecimal(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole) * SCALE + BigInt((fraction + '0'.repeat(SCALE_DIGITS)).slice(0, SCALE_DIGITS));
}

/** A scaled value → a JSON number (the only place a float appears). */
export function toNumber(scaled: bigint): number {
  const negative = scaled < 0n;
  const abs = negative ? -scaled : scaled;
  const whole = abs / SCALE;
  const fraction = (abs % SCALE).toString().padStart(SCALE_DIGITS, '0').replace(/0+$/, '');
  return Number(`${negative ? '-' : ''}${whole}${fraction === '' ? '' : '.' + fraction}`);
}

/** ceil(a / b) for non-negative BigInts. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
