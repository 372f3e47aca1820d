/**
 * The MCP endpoint's limits (spec "Tool-protocol endpoint"): without a key 30 requests per
 * minute per client address, under a ceiling of 600 per minute for all anonymous callers
 * together; with a valid key 300 per minute per account (all its keys together). Counted in
 * the gateway's RateLimiter (sliding 60-second windows), under names of their own, so the
 * windows are shared between processes wherever the rpm windows are.
 */
import type { RateLimitDecision, RateLimiter, WindowLimit } from '../gate/rate-limit/rate-limiter.ts';

export interface McpLimitValues {
  anonymousPerAddress: number;
  anonymousTotal: number;
  perAccount: number;
}

export const MCP_LIMITS: McpLimitValues = { anonymousPerAddress: 30, anonymousTotal: 600, perAccount: 300 };

export type McpCaller = { kind: 'account'; accountId: string; keyId: string } | { kind: 'anonymous'; address: string };

export interface McpRefusal {
  limit: number;
  resetSeconds: number;
  message: string;
}

export class McpLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly values: McpLimitValues = MCP_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The shared ceiling of every caller without a key. */
  private anonymous(): WindowLimit {
    return { name: 'mcp-anonymous', windowMs: 60_000, capacity: this.values.anonymousTotal };
  }

  /** Counts the request, or says why it is refused (then nothing is counted). */
  async admit(caller: McpCaller): Promise<McpRefusal | undefined> {
    const now = this.now();
    if (caller.kind === 'account') {
      const account = await this.limiter.hit({ name: 'mcp-account', windowMs: 60_000, capacity: this.values.perAccount }, caller.accountId, now);
      return account.allowed ? undefined : refusal(account, `Rate limit of ${account.limit} MCP requests per minute per account exceeded.`);
    }
    // The shared ceiling is looked at first, so a refused caller does not use up its own window.
    const everyone = await this.limiter.peek(this.anonymous(), 'all', now);
    if (!everyone.allowed) return refusal(everyone, `Rate limit of ${everyone.limit} MCP requests per minute for all callers without a key exceeded; send an API key.`);
    const own = await this.limiter.hit({ name: 'mcp-address', windowMs: 60_000, capacity: this.values.anonymousPerAddress }, caller.address, now);
    if (!own.allowed) return refusal(own, `Rate limit of ${own.limit} MCP requests per minute per address without a key exceeded; send an API key for more.`);
    const total = await this.limiter.hit(this.anonymous(), 'all', now);
    return total.allowed ? undefined : refusal(total, `Rate limit of ${total.limit} MCP requests per minute for all callers without a key exceeded; send an API key.`);
  }
}

function refusal(decision: RateLimitDecision, message: string): McpRefusal {
  return { limit: decision.limit, resetSeconds: decision.resetSeconds, message: `${message} Retry after ${decision.resetSeconds} seconds.` };
}
