/** Every migration in order. Forward only: a released migration is never edited, a change is a new one. */
import type { MigrationProvider } from 'kysely';
import { firstMigrations } from './migrations-v1.ts';
import { fineTuningJobsMigration } from './fine-tuning-jobs-migration.ts';
import { instanceLeasesMigration } from './instance-leases-migration.ts';
import { audioUploadsMigration } from './audio-uploads-migration.ts';
import { mediaJobsMigration } from './media-jobs-migration.ts';
import { moneyMigrations } from './migrations-v2.ts';
import { usageMigration } from './migration-usage.ts';
import { usageTotalsMigration } from './migration-usage-totals.ts';
import { usagePendingMigration } from './usage-pending-migration.ts';
import type { Dialect } from './tables.ts';

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        ...firstMigrations(dialect),
        ...moneyMigrations(dialect),
        '004_media_jobs': mediaJobsMigration,
        // The dashboard's rollups and job-log indexes (migration-usage.ts).
        '090_dashboard_usage': usageMigration(dialect),
        // Every later migration is numbered after 090, which databases of earlier main have run
        // (Kysely refuses a new migration that sorts before one already run).
        '091_fine_tuning_jobs': fineTuningJobsMigration,
        '092_instance_leases': instanceLeasesMigration,
        '093_audio_uploads': audioUploadsMigration(dialect),
        '094_dashboard_usage_totals': usageTotalsMigration(dialect),
        // Closed jobs rolled up in batches by the usage roller instead of a ledger trigger (usage-pending.ts).
        '095_usage_pending': usagePendingMigration(dialect),
      };
    },
  };
}
