/**
 * Serves the built admin dashboard (dashboard/ → dist/dashboard/ by `npm run build`) at /admin, and
 * any other built web app (the customer portal) the same way.
 * The directory is read once at start-up into memory: only files found then are served, by exact
 * name, so no request path ever reaches the file system.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
};

interface Asset {
  body: Buffer;
  type: string;
}

/** dist/<app> of this package, from src/admin (tsx) or dist/src/admin (built). */
export function builtAppDir(app: 'dashboard' | 'portal'): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'dist', app);
}

export function defaultDashboardDir(): string {
  return builtAppDir('dashboard');
}

function readAssets(root: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(root)) return assets;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      try {
        if (statSync(path).isDirectory()) walk(path);
        else assets.set(relative(root, path).split(sep).join('/'), { body: readFileSync(path), type: TYPES[extname(name)] ?? 'application/octet-stream' });
      } catch (error) {
        // A file removed while the folder is read (a build writing it again): served from the next start.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  };
  try {
    walk(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return assets;
}

export function registerDashboard(app: FastifyInstance, dir: string = defaultDashboardDir()): void {
  registerBuiltApp(app, '/admin', dir);
}

/** A built single-page app at `prefix`: its page, and its assets by exact name. */
export function registerBuiltApp(app: FastifyInstance, prefix: string, dir: string): void {
  const assets = readAssets(dir);
  const index = assets.get('index.html');
  const page = async (_request: unknown, reply: FastifyReply) => {
    if (index === undefined) {
      return reply.code(503).type('text/plain; charset=utf-8').send(`The page at ${prefix} is not built: run \`npm run build\`.`);
    }
    return reply
      .type(index.type)
      .header('cache-control', 'no-cache')
      .header('x-frame-options', 'DENY')
      .header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
      .send(index.body);
  };
  app.get(prefix, page); // also with a trailing slash: the server ignores them
  // The browser's icon (the app's public/favicon.ico), when the build has one.
  const icon = assets.get('favicon.ico');
  if (icon !== undefined) {
    app.get(`${prefix}/favicon.ico`, async (_request, reply) => reply.type(icon.type).header('cache-control', 'public, max-age=86400').send(icon.body));
  }
  app.get<{ Params: { '*': string } }>(`${prefix}/assets/*`, async (request, reply) => {
    const asset = assets.get(`assets/${request.params['*']}`);
    if (asset === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    // Built names carry a content hash: cache them for good.
    return reply.type(asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body);
  });
}
