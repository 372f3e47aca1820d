/**
 * Every migration in order, by the name it is registered under: a database records these names, so
 * they never change. Forward only: a released migration is never edited, a change is a new one (the
 * next number in the range a change is given). A migration may sort before one already run (each
 * change is given its own range of numbers): the migrator runs it too (`allowUnorderedMigrations`),
 * so every migration must stand on its own, never on one numbered after it. Each file is headed by its number and imports nothing live.
 */
import type { MigrationProvider } from 'kysely';
import type { Dialect } from '../tables.ts';
import { foundationMigration } from './001-foundation.ts';
import { jobsMigration } from './002-jobs.ts';
import { moneyLimitsMigration } from './003-money-limits.ts';
import { mediaJobsMigration } from './004-media-jobs.ts';
import { dashboardUsageMigration } from './090-dashboard-usage.ts';
import { fineTuningJobsMigration } from './091-fine-tuning-jobs.ts';
import { instanceLeasesMigration } from './092-instance-leases.ts';
import { audioUploadsMigration } from './093-audio-uploads.ts';
import { dashboardUsageTotalsMigration } from './094-dashboard-usage-totals.ts';
import { usagePendingMigration } from './095-usage-pending.ts';
import { usageCacheTokensMigration } from './096-usage-cache-tokens.ts';
import { storedResponsesMigration } from './110-stored-responses.ts';
import { jobAttemptsMigration } from './115-job-attempts.ts';
import { jobErrorMessageMigration } from './135-job-error-message.ts';
import { ledgerJobMigration } from './136-ledger-job.ts';
import { usageModelHoursMigration } from './137-usage-model-hours.ts';
import { portalMigration } from './120-portal.ts';
import { paymentsMigration } from './121-payments.ts';

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '001_foundation': foundationMigration(dialect),
        '002_jobs': jobsMigration,
        '003_money_limits': moneyLimitsMigration(dialect),
        '004_media_jobs': mediaJobsMigration,
        '090_dashboard_usage': dashboardUsageMigration(dialect),
        '091_fine_tuning_jobs': fineTuningJobsMigration,
        '092_instance_leases': instanceLeasesMigration,
        '093_audio_uploads': audioUploadsMigration(dialect),
        '094_dashboard_usage_totals': dashboardUsageTotalsMigration(dialect),
        '095_usage_pending': usagePendingMigration(dialect),
        '096_usage_cache_tokens': usageCacheTokensMigration,
        '110_stored_responses': storedResponsesMigration,
        '115_job_attempts': jobAttemptsMigration,
        '120_portal': portalMigration(dialect),
        '121_payments': paymentsMigration,
        '135_job_error_message': jobErrorMessageMigration,
        '136_ledger_job': ledgerJobMigration,
        '137_usage_model_hours': usageModelHoursMigration(dialect),
      };
    },
  };
}
