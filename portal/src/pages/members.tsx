/** The account's members; owners invite by e-mail and remove. */
import { useState } from 'preact/hooks';
import { ConfirmButton, Field, Status, useAction } from '../../../web-shared/ui.tsx';
import { useLoad } from '../../../web-shared/use-load.ts';
import { api } from '../api.ts';
import { when } from '../format.ts';
import type { Member, Role } from '../types.ts';

export function MembersPage({ accountId, role, self }: { accountId: string; role: Role; self: string }) {
  const members = useLoad(() => api<{ data: Member[] }>(`/accounts/${accountId}/members`), [accountId]);
  const [email, setEmail] = useState('');
  const [newRole, setNewRole] = useState<Role>('member');
  const [invited, setInvited] = useState<string | null>(null);
  const action = useAction();
  const invite = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(async () => {
      const made = await api<Member & { emailed: boolean }>(`/accounts/${accountId}/members`, { method: 'POST', body: { email, role: newRole } });
      setInvited(made.emailed ? `Invited ${made.email}: a sign-in link is on its way.` : `Added ${made.email}. They sign in with their address on the sign-in page.`);
    });
    if (ok) { setEmail(''); members.reload(); }
  };
  const remove = (who: string) => action.run(async () => { await api(`/accounts/${accountId}/members/${encodeURIComponent(who)}`, { method: 'DELETE' }); members.reload(); });
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <Status loading={members.loading && members.data === undefined} error={members.error} />
      {members.data !== undefined && (
        <ul class="plain">
          {members.data.data.map((m) => (
            <li key={m.email} aria-label={`Member ${m.email}`}>
              <strong>{m.email}</strong> <span class="badge">{m.role}</span> <small>since {when(m.created_at)}{m.invited_by !== null ? `, invited by ${m.invited_by}` : ''}</small>
              {role === 'owner' && m.email !== self && <> <ConfirmButton label="Remove" question={`Remove ${m.email}? They are signed out at once.`} onConfirm={() => void remove(m.email)} /></>}
            </li>
          ))}
        </ul>
      )}
      {role === 'owner' && (
        <form class="card" onSubmit={invite} aria-label="Invite a member">
          <h3>Invite a member</h3>
          <div class="grid">
            <Field label="Their e-mail address"><input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></Field>
            <Field label="Role">
              <select value={newRole} onChange={(e) => setNewRole(e.currentTarget.value as Role)}><option value="member">member</option><option value="owner">owner</option></select>
            </Field>
          </div>
          <button type="submit" disabled={action.busy}>Invite</button>
          {invited !== null && <p role="status">{invited}</p>}
        </form>
      )}
      {action.error !== null && <p class="error" role="alert">{action.error}</p>}
    </section>
  );
}
