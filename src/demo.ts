/**
 * `npm run demo`: the gateway on a throw-away SQLite database, every provider an emulator
 * that answers as a model would, the admin dashboard and the portal built if they are not,
 * and a demo account with a key and a portal sign-in link. It prints the key, the admin token and where everything is. Whatever it made
 * (the database files, a dashboard build, the emulators; all named after its process id in
 * the temporary folder) is removed when it stops, and when it fails to start: the failure is
 * thrown for main.ts to print as one line.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { builtAppDir } from './admin/dashboard-assets.ts';
import { INVITATION_TTL_MS } from './auth/sign-in-links.ts';
import { loadConfig } from './config.ts';
import { startDemoProviders } from './demo-providers.ts';
import { createGateway } from './gateway.ts';
import { listenFailure } from './startup-failure.ts';

type Closer = () => Promise<void> | void;

/** What was made so far, undone last-made first, once. */
class MadeSoFar {
  private readonly closers: Closer[] = [];
  private undone: Promise<void> | undefined;

  add(closer: Closer): void {
    this.closers.push(closer);
  }

  undo(): Promise<void> {
    this.undone ??= (async () => {
      for (const closer of this.closers.reverse()) await Promise.resolve().then(closer).catch(() => undefined);
    })();
    return this.undone;
  }
}

export async function runDemo(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const made = new MadeSoFar();
  const file = join(tmpdir(), `model-gateway-demo-${process.pid}.db`);
  made.add(() => {
    for (const suffix of ['', '-wal', '-shm', '.lock', '.lock-journal']) rmSync(file + suffix, { force: true });
  });
  // Ctrl+C stops the demo at any point, start-up included, and removes what it made.
  const stop = () => void made.undo().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const dashboard = await demoWebApp('dashboard');
    if (dashboard.remove !== undefined) made.add(dashboard.remove);
    const portal = await demoWebApp('portal');
    if (portal.remove !== undefined) made.add(portal.remove);
    const providers = await startDemoProviders();
    made.add(() => providers.close());
    const adminToken = randomBytes(24).toString('hex');
    const config = loadConfig({
      ...env,
      DATABASE_URL: `sqlite:${file}`,
      ADMIN_TOKEN: adminToken,
      PORT: env.PORT ?? '8080',
      HOST: env.HOST ?? '127.0.0.1',
      LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
      // The emulated provider trains in a second: the demo looks every second, not every 15.
      FINE_TUNING_POLL_MS: env.FINE_TUNING_POLL_MS ?? '1000',
      ...providers.env,
    });
    const gateway = await createGateway(config, { webAppDirs: { dashboard: dashboard.dir, portal: portal.dir } });
    made.add(() => gateway.close());
    const address = await gateway.app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenFailure(error, config.host, config.port);
    });
    const base = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
    providers.gatewayListening(base);
    const call = async (url: string, payload: object) => {
      const answer = await gateway.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${adminToken}` }, payload });
      if (answer.statusCode >= 300) throw new Error(`the demo account could not be made (${url}: ${answer.statusCode} ${answer.body})`);
      return answer.json<Record<string, unknown>>();
    };
    const account = await call('/admin/v1/accounts', { name: 'Demo account', email: 'demo@example.com', has_purchase: true });
    await call(`/admin/v1/accounts/${String(account.id)}/credits`, { credits: 1000, purchase: true });
    const key = await call(`/admin/v1/accounts/${String(account.id)}/keys`, { name: 'demo key', scopes: ['all'] });
    // The account's address is its portal owner; the link stands in for the e-mail the demo does not send.
    const signIn = await gateway.signInLinks.issue('demo@example.com', `${base}/portal`, INVITATION_TTL_MS);
    console.log(banner({ base, file, key: String(key.key), adminToken, accountId: String(account.id), providers: providers.description, signIn, notes: dashboard.note + portal.note }));
  } catch (error) {
    await made.undo();
    throw error;
  }
}

/**
 * A web app to serve (the dashboard, the portal): dist/<app> when it is built and newer than every
 * source file in <app>/; else one built now (Vite, about a second) into a temporary folder the demo removes.
 */
async function demoWebApp(app: 'dashboard' | 'portal'): Promise<{ dir: string | undefined; remove?: Closer; note: string }> {
  const built = builtAppDir(app);
  const sources = join(dirname(dirname(built)), app);
  const index = join(built, 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestChange(sources)) return { dir: built, note: '' };
  const out = mkdtempSync(join(tmpdir(), `model-gateway-demo-${process.pid}-${app}-`));
  const remove = () => rmSync(out, { recursive: true, force: true });
  try {
    // Vite is a development dependency: an install without it serves no dashboard (503) and says how to get one.
    const { build } = await import('vite');
    await build({ configFile: join(sources, 'vite.config.ts'), logLevel: 'warn', build: { outDir: out, emptyOutDir: true } });
    return { dir: out, remove, note: '' };
  } catch (error) {
    remove();
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { dir: undefined, note: `  (The ${app} could not be built: ${why}. Run npm run build.)\n` };
  }
}

/** The latest modification time of anything under `dir` (0 when it does not exist). */
function newestChange(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = statSync(dir).mtimeMs;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    newest = Math.max(newest, statSync(path).isDirectory() ? newestChange(path) : statSync(path).mtimeMs);
  }
  return newest;
}

interface BannerFacts {
  base: string;
  file: string;
  key: string;
  adminToken: string;
  accountId: string;
  providers: string;
  signIn: string;
  notes: string;
}

function banner(f: BannerFacts): string {
  const auth = `-H "Authorization: Bearer ${f.key}"`;
  return `
Model Gateway demo is running at ${f.base}  (SQLite: ${f.file}, removed on exit)
Providers: ${f.providers}

  API (OpenAI-compatible):  ${f.base}/api/v1
  Agents (Responses API):   OPENAI_BASE_URL=${f.base}/api/v1 OPENAI_API_KEY=<the key below>  (Agents SDK, AI SDK;
                            Codex: README "Codex, the Agents SDK and the AI SDK")
  Admin dashboard:          ${f.base}/admin   (sign in with the admin token)
  API reference:            ${f.base}/docs
  MCP endpoint:             ${f.base}/mcp
  Customer portal:          ${f.base}/portal
${f.notes}
  API key (1000 credits):   ${f.key}
  Admin token:              ${f.adminToken}
  Portal sign-in link:      ${f.signIn}
                            (demo@example.com, the account's owner; single-use, 72 hours)

The emulated providers answer tool calls and structured output (json_schema) as a model would.
Script one (emulators/README.md): curl -s <its address above, without /v1>/__emulator/enqueue \
  -H "Content-Type: application/json" -d '{"scenario":{"kind":"error","status":429}}'

Try it:
  curl -s ${f.base}/api/v1/models?limit=3 ${auth}
  curl -s ${f.base}/api/v1/chat/completions ${auth} \\
    -H "Content-Type: application/json" \\
    -d '{"model":"gpt-6-luna","messages":[{"role":"user","content":"Hello!"}]}'
  curl -sN ${f.base}/api/v1/chat/completions ${auth} \\
    -H "Content-Type: application/json" \\
    -d '{"model":"deepseek-flash","stream":true,"messages":[{"role":"user","content":"Stream, please"}]}'
  curl -s ${f.base}/api/v1/chat/completions ${auth} \\
    -H "Content-Type: application/json" \\
    -d '{"model":"claude-sonnet-5-5","messages":[{"role":"user","content":"Weather in Paris?"}],"tool_choice":"required","tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}'
  curl -si ${f.base}/api/v1/embeddings ${auth} \\
    -H "Content-Type: application/json" -d '{"input":["Hello!","Bonjour!"],"dimensions":4}'
  curl -s ${f.base}/api/v1/jobs/<X-Job-Id from above> ${auth}
  curl -s ${f.base}/api/v1/images/generations ${auth} \\
    -H "Content-Type: application/json" \\
    -d '{"model":"flux-2-pro","prompt":"A lighthouse at dawn, watercolour","n":2}'
  curl -si ${f.base}/api/v1/videos/generations ${auth} \\
    -H "Content-Type: application/json" \\
    -d '{"model":"kling-v3-standard","prompt":"Waves rolling onto a beach at night","duration":5}'
  curl -s ${f.base}/admin/v1/accounts/${f.accountId} -H "Authorization: Bearer ${f.adminToken}"

Press Ctrl+C to stop.`;
}
