/**
 * Entry point: `serve` (npm start), `demo` (npm run demo), `admin …` (npm run admin).
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdminCli, UsageError } from './cli/admin-cli.ts';
import { CatalogError } from './catalog/catalog.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createGateway, type Gateway } from './gateway.ts';
import { startDemoProviders } from './demo-providers.ts';
import { INVITATION_TTL_MS } from './auth/sign-in-links.ts';

async function serve(config: Config): Promise<Gateway> {
  const gateway = await createGateway(config);
  await gateway.app.listen({ port: config.port, host: config.host });
  const stop = async () => {
    await gateway.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  return gateway;
}

async function demo(): Promise<void> {
  const file = join(tmpdir(), `model-gateway-demo-${process.pid}.db`);
  const adminToken = randomBytes(24).toString('hex');
  const providers = await startDemoProviders();
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: `sqlite:${file}`,
    ADMIN_TOKEN: adminToken,
    PORT: process.env.PORT ?? '8080',
    HOST: process.env.HOST ?? '127.0.0.1',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    ...providers.env,
  });
  const gateway = await createGateway(config);
  const address = await gateway.app.listen({ port: config.port, host: config.host });
  const base = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
  providers.gatewayListening(base);
  const call = async (method: string, url: string, payload?: unknown) => {
    const r = await gateway.app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${adminToken}` }, payload: payload as object });
    return r.json() as Record<string, unknown>;
  };
  const account = await call('POST', '/admin/v1/accounts', { name: 'Demo account', email: 'demo@example.com', has_purchase: true });
  await call('POST', `/admin/v1/accounts/${String(account.id)}/credits`, { credits: 1000, purchase: true });
  const key = await call('POST', `/admin/v1/accounts/${String(account.id)}/keys`, { name: 'demo key', scopes: ['all'] });
  // The account's address is its portal owner; the link stands in for the e-mail the demo does not send.
  const signIn = await gateway.signInLinks.issue('demo@example.com', `${base}/portal`, INVITATION_TTL_MS);

  const cleanup = async () => {
    await gateway.close();
    await providers.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    process.exit(0);
  };
  process.once('SIGINT', () => void cleanup());
  process.once('SIGTERM', () => void cleanup());

  console.log(`
Model Gateway demo is running at ${base}/api/v1  (SQLite: ${file}, removed on exit)
Providers: ${providers.description}

  API key (1000 credits):  ${String(key.key)}
  Admin token:             ${adminToken}
  Portal sign-in link:     ${signIn}
                           (demo@example.com, the account's owner; single-use, 72 hours; the portal and
                           dashboard pages need \`npm run build\` once)

Try it:
  curl -s ${base}/api/v1/models?limit=3 -H "Authorization: Bearer ${String(key.key)}"
  curl -s ${base}/api/v1/chat/completions -H "Authorization: Bearer ${String(key.key)}" \\
    -H "Content-Type: application/json" \\
    -d '{"model":"gpt-6-luna","messages":[{"role":"user","content":"Hello!"}]}'
  curl -sN ${base}/api/v1/chat/completions -H "Authorization: Bearer ${String(key.key)}" \\
    -H "Content-Type: application/json" \\
    -d '{"model":"deepseek-flash","stream":true,"messages":[{"role":"user","content":"Stream, please"}]}'
  curl -si ${base}/api/v1/embeddings -H "Authorization: Bearer ${String(key.key)}" \\
    -H "Content-Type: application/json" -d '{"input":["Hello!","Bonjour!"],"dimensions":4}'
  curl -s ${base}/api/v1/jobs/<X-Job-Id from above> -H "Authorization: Bearer ${String(key.key)}"
  curl -s ${base}/api/v1/images/generations -H "Authorization: Bearer ${String(key.key)}" \\
    -H "Content-Type: application/json" \\
    -d '{"model":"flux-2-pro","prompt":"A lighthouse at dawn, watercolour","n":2}'
  curl -si ${base}/api/v1/videos/generations -H "Authorization: Bearer ${String(key.key)}" \\
    -H "Content-Type: application/json" \\
    -d '{"model":"kling-v3-standard","prompt":"Waves rolling onto a beach at night","duration":5}'
  curl -s ${base}/admin/v1/accounts/${String(account.id)} -H "Authorization: Bearer ${adminToken}"

Press Ctrl+C to stop.`);
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        await serve(loadConfig());
        return;
      case 'demo':
        await demo();
        return;
      case 'admin':
        process.exitCode = await runAdminCli(rest);
        return;
      default:
        console.error(`Unknown command '${command}'. Use serve, demo or admin.`);
        process.exitCode = 2;
    }
  } catch (error) {
    if (error instanceof ConfigError || error instanceof UsageError || error instanceof CatalogError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}

await main(process.argv.slice(2));
