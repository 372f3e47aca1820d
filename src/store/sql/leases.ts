/** Process leases on the database's clock (docs/decisions.md "Process leases"). */

/**
 * Until when a process is taken to be alive, on the database's clock: its lease, or for a process of a release
 * before leases (a rolling upgrade), its latest heartbeat + 30 s, that release's rule.
 */
export const LEASE_UNTIL = 'COALESCE(i.lease_until, i.heartbeat_at + 30000)';
