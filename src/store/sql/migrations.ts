/** Every migration in order. Forward only: a released migration is never edited, a change is a new one. */
import type { MigrationProvider } from 'kysely';
import { firstMigrations } from './migrations-v1.ts';
import { mediaJobsMigration } from './media-jobs-migration.ts';
import { moneyMigrations } from './migrations-v2.ts';
import { usageMigration } from './migration-usage.ts';
import { usageTotalsMigration } from './migration-usage-totals.ts';
import type { Dialect } from './tables.ts';

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        ...firstMigrations(dialect),
        ...moneyMigrations(dialect),
        '004_media_jobs': mediaJobsMigration,
        // The dashboard's rollups and job-log indexes (migration-usage.ts); numbered high to stay last.
        '090_dashboard_usage': usageMigration(dialect),
        '091_dashboard_usage_totals': usageTotalsMigration(dialect),
      };
    },
  };
}
