/** Limit notifications of the account's keys, newest first. */
import { Status } from '../../../web-shared/ui.tsx';
import { useLoad } from '../../../web-shared/use-load.ts';
import { api } from '../api.ts';
import { when } from '../format.ts';
import type { Notification } from '../types.ts';

export function NotificationsPage({ accountId }: { accountId: string }) {
  const list = useLoad(() => api<{ data: Notification[] }>(`/accounts/${accountId}/notifications`), [accountId]);
  return (
    <section aria-labelledby="notifications-title">
      <h2 id="notifications-title">Notifications</h2>
      <Status loading={list.loading} error={list.error} />
      {list.data !== undefined && (
        <ul class="plain">
          {list.data.data.map((n, i) => (
            <li key={i}>
              <strong>{n.kind === 'warning' ? `${Math.round(n.threshold * 100)}% of the ${n.limit} limit` : `${n.limit === 'daily' ? 'Daily' : 'Monthly'} limit reached`}</strong>
              {' '}— key {n.key_name ?? n.key_id ?? '—'}, {when(n.created_at)}{n.emailed ? ', e-mailed' : ''}
            </li>
          ))}
          {list.data.data.length === 0 && <li class="muted">No notifications. Keys with limits warn here at 80 % and when a limit is reached.</li>}
        </ul>
      )}
    </section>
  );
}
