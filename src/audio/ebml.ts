/**
 * EBML (Matroska/WebM) elements read from untrusted bytes for matroska-length.ts: an element's
 * ID and size, and a master element's children, where an element of unknown size ends at an
 * element of its own or a higher level. Every element read is counted against the walk's
 * budget (walk-budget.ts).
 */
import type { WalkBudget } from './walk-budget.ts';

/** Work units for reading one element (it is at least 2 bytes long). */
const ELEMENT_UNITS = 2;

export interface Element {
  id: number;
  /** Where the element (its ID) starts, and where its body starts and ends (the end never past the parent's or the data's). */
  at: number;
  start: number;
  end: number;
  /** The size field says "unknown" (the end is then the limit given). */
  unknown: boolean;
}

/** Where reading an element's children stopped; `broken`: at bytes that are no element, or at an element of unknown size it cannot follow (the walk then resyncs at the next Cluster). */
export interface Stop {
  at: number;
  broken: boolean;
}

/** What a walk reads: the file and its budget. */
export interface EbmlReader {
  bytes: Buffer;
  budget: WalkBudget;
}

/** A vint's length from its first byte (0: not a vint of at most `max` bytes). */
export function vintLength(first: number, max: number): number {
  for (let length = 1; length <= max; length++) if ((first & (0x80 >> (length - 1))) !== 0) return length;
  return 0;
}

export function readElement(state: EbmlReader, at: number, limit: number): Element | undefined {
  const { bytes } = state;
  state.budget.spend(ELEMENT_UNITS);
  const idLength = vintLength(bytes[at] ?? 0, 4);
  if (idLength === 0 || at + idLength >= limit) return undefined;
  let id = 0;
  for (let i = 0; i < idLength; i++) id = id * 256 + (bytes[at + i] ?? 0);
  const sizeAt = at + idLength;
  const sizeLength = vintLength(bytes[sizeAt] ?? 0, 8);
  if (sizeLength === 0 || sizeAt + sizeLength > limit) return undefined;
  const firstMask = 0xff >> sizeLength;
  let size = (bytes[sizeAt] ?? 0) & firstMask;
  let allOnes = size === firstMask;
  for (let i = 1; i < sizeLength; i++) {
    const b = bytes[sizeAt + i] ?? 0;
    size = size * 256 + b;
    allOnes &&= b === 0xff;
  }
  const start = sizeAt + sizeLength;
  if (allOnes) return { id, at, start, end: limit, unknown: true };
  return { id, at, start, end: Math.min(start + size, limit), unknown: false };
}

export function readUint(bytes: Buffer, e: Element): number {
  let value = 0;
  for (let i = e.start; i < e.end && i < e.start + 8; i++) value = value * 256 + (bytes[i] ?? 0);
  return value;
}

/**
 * Visits a master element's children in order. A known-size parent ends at its size (bytes
 * that are no element end it early: the walk goes on after it). A parent of unknown size ends
 * at the first child in `ends` (an element of its own or a higher level); bytes that are no
 * element, or a child of unknown size `visit` does not read, break it. `visit` answers where a
 * child it read as a master stopped, or undefined for a child it read whole (or skipped).
 */
export function eachChild(state: EbmlReader, parent: Element, ends: ReadonlySet<number>, visit: (child: Element) => Stop | undefined): Stop {
  let at = parent.start;
  while (at < parent.end) {
    const child = readElement(state, at, parent.end);
    if (child === undefined) return parent.unknown ? { at, broken: true } : { at: parent.end, broken: false };
    if (parent.unknown && ends.has(child.id)) return { at, broken: false };
    const stop = visit(child);
    if (stop !== undefined) {
      if (stop.broken) return stop;
      at = stop.at;
    } else if (child.unknown && parent.unknown) {
      return { at: child.at, broken: true };
    } else {
      at = child.end;
    }
  }
  return { at: parent.end, broken: false };
}
