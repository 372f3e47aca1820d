/**
 * Credits as money, for the web apps (the portal; the admin dashboard may use it too): 1 credit =
 * USD 0.01, amounts from the API in decimal credits. Signed amounts keep their sign in view.
 */
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });

/** `12.5` credits → `$0.125` (to a millionth of a dollar, so small runs do not show as $0.00); null → an em dash. */
export function creditsAsUsd(credits: number | null | undefined): string {
  return credits === null || credits === undefined ? '—' : usd.format(credits / 100);
}

/** A movement with its sign always shown: `+$10.00`, `−$0.0625`. */
export function signedUsd(credits: number): string {
  const text = usd.format(Math.abs(credits) / 100);
  return credits < 0 ? `−${text}` : `+${text}`;
}

export const creditCount = (credits: number | null | undefined): string =>
  credits === null || credits === undefined ? '—' : credits.toLocaleString('en-US', { maximumFractionDigits: 6 });
