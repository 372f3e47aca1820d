/**
 * What the audio-length walks (matroska-length.ts, ogg-length.ts) may spend on one untrusted
 * file, on the request thread (docs/decisions.md "Audio length from the audio itself"). Each
 * walk is linear by construction; the budget is the bound that holds even if a crafted file
 * finds a path that is not: past it the file is unreadable (`audioSeconds` answers undefined,
 * which uploads refuse with 400 audio_unreadable), never measured from what was walked so far.
 */

/** The file cannot be measured: its structure exceeds a bound a real recording stays far below. */
export class UnreadableAudio extends Error {
  constructor(reason: string) {
    super(`unreadable audio: ${reason}`);
    this.name = 'UnreadableAudio';
  }
}

/** Work units a walk may spend per byte of the file (a linear walk spends well under half of it). */
const UNITS_PER_BYTE = 8;
/** Slack for small files (a damaged page or two re-checked costs up to 65 KB each). */
const BASE_UNITS = 1 << 20;

/**
 * A count of the work done: elements or pages read (a few units each) and bytes scanned or
 * checksummed (one unit each). Deterministic, so tests can hold a walk to it.
 */
export class WalkBudget {
  spent = 0;
  readonly limit: number;

  constructor(fileBytes: number, limit = UNITS_PER_BYTE * fileBytes + BASE_UNITS) {
    this.limit = limit;
  }

  spend(units: number): void {
    this.spent += units;
    if (this.spent > this.limit) throw new UnreadableAudio(`more than ${this.limit} units of work to walk`);
  }
}
