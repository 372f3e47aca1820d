/**
 * IP address and CIDR lists (key allowlists, TRUST_PROXY), parsed once with ipaddr.js.
 */
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface AddressMatcher {
  /** Whether a parsed address falls in one of the entries. */
  matches(address: ipaddr.IPv4 | ipaddr.IPv6): boolean;
}

export type ParsedList = { ok: true; matcher: AddressMatcher } | { ok: false; error: string };

/** Parses an address string; IPv4-mapped IPv6 (::ffff:1.2.3.4) becomes IPv4. Undefined when invalid. */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const trimmed = text.trim().replace(/^\[(.*)\]$/, '$1');
  // Zone ids (fe80::1%eth0) are not part of the address a list can name.
  const bare = trimmed.includes('%') ? trimmed.slice(0, trimmed.indexOf('%')) : trimmed;
  if (!ipaddr.isValid(bare)) return undefined;
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && ipaddr.IPv4.isValid(bare)) return undefined;
  const address = ipaddr.parse(bare);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (address as ipaddr.IPv6).toIPv4Address();
  }
  return address;
}

function parseEntry(entry: string): Range | undefined {
  if (entry.includes('/')) {
    try {
      if (!ipaddr.isValidCIDR(entry)) return undefined;
      const [address, prefix] = ipaddr.parseCIDR(entry);
      if (address.kind() === 'ipv4' && !ipaddr.IPv4.isValidFourPartDecimal(entry.split('/')[0] ?? '')) return undefined;
      return [address, prefix];
    } catch {
      return undefined;
    }
  }
  const address = parseAddress(entry);
  if (address === undefined) return undefined;
  return [address, address.kind() === 'ipv4' ? 32 : 128];
}

/** Parses IPs and CIDR blocks; the error names the first invalid entry. */
export function parseAddressList(entries: readonly string[]): ParsedList {
  const ranges: Range[] = [];
  for (const entry of entries) {
    const range = parseEntry(entry.trim());
    if (range === undefined) return { ok: false, error: `'${entry}' is not an IPv4 or IPv6 address or CIDR block` };
    ranges.push(range);
  }
  const v4 = ranges.filter(([a]) => a.kind() === 'ipv4') as [ipaddr.IPv4, number][];
  const v6 = ranges.filter(([a]) => a.kind() === 'ipv6') as [ipaddr.IPv6, number][];
  return {
    ok: true,
    matcher: {
      matches(address) {
        if (address.kind() === 'ipv4') {
          const a = address as ipaddr.IPv4;
          return v4.some((range) => a.match(range));
        }
        const a = address as ipaddr.IPv6;
        return v6.some((range) => a.match(range));
      },
    },
  };
}
