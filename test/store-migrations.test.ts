/**
 * Migrations are one file per number under src/store/sql/migrations/: each headed by the number
 * it is registered under, and importing nothing live (only Kysely, the tables' types, and earlier
 * migrations, which are frozen too), so that no later change of the code changes what a migration
 * does to a database it has not yet upgraded.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/store/sql/migrations/index.ts';

const DIR = 'src/store/sql/migrations';
const files = readdirSync(DIR).filter((f) => f !== 'index.ts' && f.endsWith('.ts'));

describe('migrations', () => {
  it('one file per registered migration, its name starting with the registered number', async () => {
    const registered = Object.keys(await migrationProvider('sqlite').getMigrations());
    expect(registered).toEqual([...registered].sort());
    expect(files.map((f) => f.slice(0, 3)).sort()).toEqual(registered.map((name) => name.slice(0, 3)));
    expect(Object.keys(await migrationProvider('postgres').getMigrations())).toEqual(registered);
  });

  for (const file of files) {
    it(`${file}: headed by its number, importing nothing live`, () => {
      const text = readFileSync(join(DIR, file), 'utf8');
      expect(text).toMatch(new RegExp(`^/\\*\\*\\n \\* Migration ${file.slice(0, 3)}[: ]`));
      const imports = [...text.matchAll(/^import (type )?[^;]*? from '([^']+)';$/gms)].map((m) => ({ typeOnly: m[1] !== undefined, from: m[2] as string }));
      for (const { typeOnly, from } of imports) {
        const frozen = from === 'kysely' || (typeOnly && from === '../tables.ts') || (/^\.\/\d{3}-[\w-]+\.ts$/.test(from) && from.slice(2, 5) < file.slice(0, 3));
        expect(frozen, `${file} imports ${from}`).toBe(true);
      }
    });
  }
});
