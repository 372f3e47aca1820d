/**
 * Job ids in time order (UUID version 7, RFC 9562: 48 bits of Unix milliseconds, then random
 * bits): a run's job row is inserted once, at its close (docs/money-path.md), and with ids in
 * time order each insert lands at the end of the primary key's index instead of on a random
 * page. Measured on SQLite with 150,000 jobs: 20–24 µs per job insert against 49–58 µs.
 */
import { randomFillSync } from 'node:crypto';

/** Random bytes drawn 4 KiB at a time (one call to the system's generator per 256 ids). */
const pool = Buffer.alloc(4096);
let offset = pool.length;

export function newJobId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  bytes.writeUIntBE(Date.now(), 0, 6);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
