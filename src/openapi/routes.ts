/**
 * GET /api/v1/openapi.json (the document, serialised once) and /docs (Swagger UI from
 * swagger-ui-dist, served from this process: no CDN). Public, like the catalog.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../shared/errors.ts';
import { HOLD_LIMITS, type HoldLimit } from '../store/limits.ts';
import { buildOpenApiDocument } from './document.ts';

const SPEC_URL = '/api/v1/openapi.json';

/** The files of swagger-ui-dist the page loads, and their types. Nothing else is served. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Model Gateway API</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css" />
    <link rel="stylesheet" type="text/css" href="/docs/index.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="/docs/initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(SPEC_URL)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

export function registerOpenApiRoutes(app: FastifyInstance, version: string, limits: readonly HoldLimit[] = HOLD_LIMITS): void {
  const document = JSON.stringify(buildOpenApiDocument(version, limits));
  const assetDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();

  app.get(SPEC_URL, async (_request, reply) => reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(document));
  app.get('/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/docs/*', async (request, reply) => {
    const file = (request.params as { '*': string })['*'];
    if (file === '') return reply.type('text/html; charset=utf-8').send(PAGE);
    if (file === 'initializer.js') return reply.type('text/javascript; charset=utf-8').send(INITIALIZER);
    const type = ASSETS[file];
    if (type === undefined) throw new GatewayError('not_found', `No file /docs/${file}.`);
    let bytes = cache.get(file);
    if (bytes === undefined) {
      bytes = readFileSync(join(assetDir, file));
      cache.set(file, bytes);
    }
    return reply.type(type).header('cache-control', 'public, max-age=86400').send(bytes);
  });
}
