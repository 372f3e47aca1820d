/** Catalog loading: a broken file stops start-up naming the entry and field. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Catalog, CatalogError } from '../src/catalog/catalog.ts';
import { chatProviderIds, describedProviderIds, PROVIDERS } from '../src/providers/descriptors.ts';
import { chatEntry, imageEntry, writeCatalog } from './fixtures/catalog.ts';

const run = promisify(execFile);
const options = { chatProviders: chatProviderIds(PROVIDERS), keyedProviders: describedProviderIds(PROVIDERS), providerHasCredentials: () => true };

describe('catalog file validation', () => {
  it('a bad entry stops start-up with a message naming the entry and field', async () => {
    const file = writeCatalog([imageEntry('fine'), chatEntry('broken-model', 'provider_1', { pricing: { unit: 'per_token', input_usd_per_1m: 'cheap', output_usd_per_1m: '1' } })]);
    expect(() => Catalog.fromFile(file, options)).toThrow(CatalogError);
    expect(() => Catalog.fromFile(file, options)).toThrow(/entry 1 'broken-model', field pricing.input_usd_per_1m/);
    // The real start-up path: the process exits with that message.
    const started = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      env: { ...process.env, CATALOG_FILE: file, DATABASE_URL: 'sqlite::memory:', PORT: '0' },
    }).then(() => ({ code: 0, stderr: '' }), (error: { code: number; stderr: string }) => error);
    expect(started.code).toBe(2);
    expect(started.stderr).toContain("entry 1 'broken-model'");
    expect(started.stderr).toContain('pricing.input_usd_per_1m');
  });

  it('refuses dangling references, duplicate slugs and chat facts on non-chat providers', () => {
    expect(() => Catalog.fromJson({ prices_checked_at: '2026-11-22', models: [chatEntry('a', 'provider_1', { lifecycle: { status: 'deprecated', successor_slug: 'nope' } })] }, options))
      .toThrow(/entry 0 'a', field lifecycle.successor_slug: no model has slug 'nope'/);
    expect(() => Catalog.fromJson({ prices_checked_at: '2026-11-22', models: [imageEntry('a'), imageEntry('a')] }, options)).toThrow(/duplicate slug/);
    expect(() => Catalog.fromJson({ prices_checked_at: '2026-11-22', models: [chatEntry('a', 'provider_5')] }, options)).toThrow(/entry 0 'a', field chat/);
    expect(() => Catalog.fromJson({ prices_checked_at: '2026-11-22', models: [{ ...imageEntry('a'), secret_field: 1 }] }, options)).toThrow(/entry 0 'a'/);
  });
});
