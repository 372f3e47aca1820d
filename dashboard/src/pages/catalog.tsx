/** The catalog with prices and availability, as clients see it (GET /api/v1/models?include_unavailable=true). */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Field, Status } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import type { CatalogModel } from '../types.ts';

function price(m: CatalogModel): string {
  const p = m.pricing;
  if (p === null) return 'not priced';
  if (p.unit === 'per_token') return `$${p.input_usd_per_1m} in / $${p.output_usd_per_1m} out per 1M tokens`;
  return p.usd === null ? p.basis : `$${p.usd} ${p.unit.replaceAll('_', ' ')}`;
}

export function CatalogPage() {
  const [filter, setFilter] = useState('');
  // The public catalog route: no admin token (it would be read as an invalid API key).
  const models = useLoad(() => api<{ data: CatalogModel[] }>('/api/v1/models?include_unavailable=true&limit=500', { admin: false }), []);
  const term = filter.trim().toLowerCase();
  const rows = (models.data?.data ?? []).filter((m) => term === '' || `${m.id} ${m.name} ${m.owned_by} ${m.category}`.toLowerCase().includes(term));
  return (
    <section aria-labelledby="catalog-title">
      <h1 id="catalog-title">Catalog</h1>
      <Field label="Filter models"><input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} /></Field>
      <Status loading={models.loading} error={models.error} />
      <div class="scroll">
        <table>
          <caption>{rows.length} models</caption>
          <thead><tr><th scope="col">Model</th><th scope="col">Provider</th><th scope="col">Category</th><th scope="col">Price</th><th scope="col">Availability</th></tr></thead>
          <tbody>
            {rows.map((m) => (
              <tr key={m.id}>
                <td><code>{m.id}</code><br /><small>{m.name}</small></td>
                <td>{m.owned_by}</td>
                <td>{m.category}</td>
                <td>{price(m)}</td>
                <td>{m.available ? 'available' : `unavailable: ${m.unavailable_reason ?? 'no reason given'}${m.use_instead === undefined ? '' : ` (use ${m.use_instead})`}`}{m.lifecycle !== undefined ? ` · ${m.lifecycle.status}` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
