/**
 * A real OpenID Connect provider for tests (oidc-provider, its development login and consent
 * pages): any login name is accepted and becomes the person's verified e-mail address. Its port
 * is known before the client's redirect URIs are, so it listens first and takes its clients after.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Starts answering, for a client that returns to these URIs. */
  serve(redirectUris: string[]): void;
  close(): Promise<void>;
}

export async function startOidcProvider(): Promise<TestOidcProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    if (handler === undefined) {
      res.writeHead(503).end();
      return;
    }
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'model-gateway';
  const clientSecret = 'test-client-secret-0123456789';
  return {
    issuer,
    clientId,
    clientSecret,
    serve(redirectUris) {
      const provider = new Provider(issuer, {
        clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
        findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, email: id, email_verified: true }) }),
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        cookies: { keys: ['test-cookie-key-0123456789'] },
        features: { devInteractions: { enabled: true } },
      });
      handler = provider.callback();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
