/** docs/api covers every route, error code, header and MCP tool */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/openapi/document.ts';
import { OPERATIONS } from '../src/openapi/operations.ts';
import { DocsIndex } from '../src/mcp/docs-index.ts';
import { ERROR_CODES } from '../src/shared/errors.ts';

const dir = new URL('../docs/api/', import.meta.url);
const pages = Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith('.md')).map((f) => [f.slice(0, -3), readFileSync(new URL(f, dir), 'utf8')]));
const all = Object.values(pages).join('\n');

describe('the API docs', () => {
  it('name every route as METHOD /path', () => {
    const missing = OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path}`).filter((route) => !all.includes(route));
    expect(missing).toEqual([]);
  });

  it('list every error code with its status and type', () => {
    for (const code of ERROR_CODES) expect(pages.errors, code).toContain(`\`${code}\``);
  });

  it('list every header of the OpenAPI document', () => {
    const headers = Object.keys((buildOpenApiDocument('test').components as { headers: object }).headers);
    for (const header of [...headers, 'Authorization', 'If-None-Match', 'X-Forwarded-For', 'Allow']) expect(pages.headers, header).toContain(`\`${header}\``);
  });

  it('state the limits', () => {
    for (const fact of ['600 per minute', '60 to 6,000', '30 requests per minute per client address', '300 requests per minute per account', 'at most 512', '1 to 5000', 'at most 16', '2,000,000', '25 MB', 'at most 500']) {
      expect(pages.limits, fact).toContain(fact);
    }
  });

  it('describe every MCP tool', () => {
    for (const tool of ['list_models', 'get_model', 'estimate_cost', 'search_docs', 'get_doc']) expect(pages.mcp).toContain(`\`${tool}\``);
  });

  it('have a title and link only to pages that exist', () => {
    for (const [name, text] of Object.entries(pages)) {
      expect(text.startsWith('# '), name).toBe(true);
      for (const link of text.matchAll(/\]\(([a-z-]+)\.md(#[a-z-]+)?\)/g)) expect(Object.keys(pages), `${name} → ${link[1]}`).toContain(link[1]);
    }
  });

  it('are what the MCP docs index serves', () => {
    const index = DocsIndex.fromDirectory();
    expect(index.pages.map((p) => p.name).sort()).toEqual(Object.keys(pages).sort());
    expect(index.search('X-RateLimit-Reset', 3).map((h) => h.page)).toContain('limits');
  });
});
