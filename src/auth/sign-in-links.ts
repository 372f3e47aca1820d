/**
 * Sign-in by e-mail link: single-use, valid for 15 minutes, at most 5 a hour per address and 20
 * per client address. The answer is the same whether or not the address belongs to a member
 * (a link is sent only to members), and it is given before any mail is sent, so neither the
 * words nor the time tell who is a member.
 */
import type { RateLimiter, WindowLimit } from '../gate/rate-limit/rate-limiter.ts';
import type { PortalStore } from '../store/portal.ts';
import { hashSecret, newSecret } from './sessions.ts';

export const LINK_TTL_MS = 15 * 60_000;
/** An invitation's link waits longer for its reader; it is single-use all the same. */
export const INVITATION_TTL_MS = 72 * 3_600_000;

const PER_EMAIL: WindowLimit = { name: 'portal-link-email', windowMs: 3_600_000, capacity: 5 };
const PER_ADDRESS: WindowLimit = { name: 'portal-link-address', windowMs: 3_600_000, capacity: 20 };

export type SendMail = (to: string, subject: string, text: string) => Promise<void>;

export interface SignInLinkOptions {
  store: PortalStore;
  limiter: RateLimiter;
  /** Undefined without SMTP_URL: links reach no one (the demo prints one). */
  mail: SendMail | undefined;
  now: () => number;
  /** A mail that could not be sent (logged, never shown to the asker). */
  onMailError: (error: unknown) => void;
}

/** `you@example.com ` → `you@example.com`; e-mail addresses are compared lower-cased. */
export const normalEmail = (email: string): string => email.trim().toLowerCase();

export class SignInLinks {
  constructor(private readonly options: SignInLinkOptions) {}

  /** 'limited' when the address or the client asked too often (whoever the address belongs to). */
  async request(email: string, clientAddress: string | undefined, portalUrl: string): Promise<'accepted' | 'limited'> {
    const { store, limiter, now } = this.options;
    const address = normalEmail(email);
    const t = now();
    const byEmail = await limiter.hit(PER_EMAIL, hashSecret(address), t);
    const byClient = await limiter.hit(PER_ADDRESS, clientAddress ?? 'unknown', t);
    if (!byEmail.allowed || !byClient.allowed) return 'limited';
    // The mail leaves after the answer: a member's request takes no longer than anyone else's.
    void (async () => {
      if ((await store.membershipsOf(address)).length === 0) return;
      const link = await this.issue(address, portalUrl, LINK_TTL_MS);
      await this.options.mail?.(address, 'Your Model Gateway sign-in link',
        `Sign in to the Model Gateway portal:\n\n${link}\n\nThe link works once, for 15 minutes. If you did not ask for it, ignore this e-mail.`);
    })().catch(this.options.onMailError);
    return 'accepted';
  }

  /** A new single-use link for `email` (invitations, the demo). */
  async issue(email: string, portalUrl: string, ttlMs: number = LINK_TTL_MS): Promise<string> {
    const token = newSecret();
    const t = this.options.now();
    await this.options.store.createLink(hashSecret(token), normalEmail(email), t, t + ttlMs);
    // In the fragment: never sent to a server, so never in a log line; the page posts it back.
    return `${portalUrl}/#/link/${token}`;
  }

  /** The link's e-mail address, once; undefined when unknown, used or expired. */
  redeem(token: string): Promise<string | undefined> {
    return this.options.store.redeemLink(hashSecret(token), this.options.now());
  }
}
