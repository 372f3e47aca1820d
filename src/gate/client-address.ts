/**
 * The client address as seen by the service's edge proxy (DECISIONS.md, Rate limits and keys):
 * without TRUST_PROXY the socket address; with it, the rightmost X-Forwarded-For entry
 * that is not itself a trusted proxy, when the socket peer is trusted.
 */
import type ipaddr from 'ipaddr.js';
import { parseAddress, type AddressMatcher } from './address-match.ts';

export interface ClientAddress {
  /** The text that arrived (for messages), or undefined when none could be determined. */
  text: string | undefined;
  parsed: ipaddr.IPv4 | ipaddr.IPv6 | undefined;
}

const UNKNOWN: ClientAddress = { text: undefined, parsed: undefined };

export function resolveClientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustProxy: AddressMatcher | undefined,
): ClientAddress {
  if (socketAddress === undefined) return UNKNOWN;
  const peer = parseAddress(socketAddress);
  if (peer === undefined) return { text: socketAddress, parsed: undefined };
  const peerAddress = { text: peer.toString(), parsed: peer };
  if (trustProxy === undefined || !trustProxy.matches(peer) || forwardedFor === undefined) return peerAddress;

  const entries = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0) return peerAddress;
  for (let i = entries.length - 1; i >= 0; i--) {
    const text = entries[i] as string;
    const parsed = parseAddress(text);
    // An entry we cannot read means the chain cannot be followed: the address is unknown.
    if (parsed === undefined) return { text, parsed: undefined };
    if (!trustProxy.matches(parsed)) return { text: parsed.toString(), parsed };
  }
  // Every entry is a trusted proxy: the leftmost one is the farthest hop we know.
  const first = parseAddress(entries[0] as string);
  return first === undefined ? UNKNOWN : { text: first.toString(), parsed: first };
}
