/**
 * The docs' table of the hold's limits (docs/api/limits.md "The hold's limits"), generated from
 * the limit table (limits.ts); test/limits-table.test.ts checks the page holds it.
 */
import { statusOf } from '../shared/errors.ts';
import { PERIODS, type HoldLimit } from './limits.ts';

/** Where the generated table sits in its page. */
export const LIMITS_DOC = {
  file: 'docs/api/limits.md',
  begin: '<!-- limits-table: generated from src/store/limits.ts (test/limits-table.test.ts checks it) -->',
  end: '<!-- /limits-table -->',
} as const;

const OWNERS: Record<HoldLimit['owner'], string> = {
  account: 'account',
  key: 'key (its family: the key and every key rotated from it)',
  trial: 'account without a purchase (trial)',
};

function refusal(l: HoldLimit): string {
  const code = l.code === 'route'
    ? `402 \`spending_limit_reached\` (chat) or \`monthly_limit_exceeded\` (every other billed route)`
    : `${statusOf(l.code)} \`${l.code}\``;
  return l.resetHeader === true ? `${code} + \`X-Key-Limit-Reset\`` : code;
}

/** The table, one line per row, in the order the hold checks them. */
export function limitsDocTable(limits: readonly HoldLimit[]): string {
  const lines = limits.map((l, i) => [
    String(i + 1),
    `\`${l.name}\``,
    OWNERS[l.owner],
    l.ceilingDoc,
    l.counts,
    l.period === null ? '—' : PERIODS[l.period].doc,
    refusal(l),
    l.setting === undefined ? '—' : `\`${l.setting.api}\``,
  ].join(' | '));
  return [
    '| # | Limit | Whose | Ceiling | What counts | Period | Answer | Set by the field |',
    '|---|---|---|---|---|---|---|---|',
    ...lines.map((line) => `| ${line} |`),
  ].join('\n');
}

/** The page with its table replaced by the table of `limits` (the page must hold both markers). */
export function withLimitsTable(page: string, limits: readonly HoldLimit[]): string {
  const begin = page.indexOf(LIMITS_DOC.begin);
  const end = page.indexOf(LIMITS_DOC.end);
  if (begin < 0 || end < begin) throw new Error(`${LIMITS_DOC.file}: the limits table's markers are missing`);
  return `${page.slice(0, begin + LIMITS_DOC.begin.length)}\n${limitsDocTable(limits)}\n${page.slice(end)}`;
}
