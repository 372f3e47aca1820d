export const SCOPES = ['read', 'chat', 'images', 'video', 'audio', 'embeddings', 'jobs', 'fine_tuning', 'all'] as const;
export type Scope = (typeof SCOPES)[number];

export const DEFAULT_SCOPES: readonly Scope[] = ['read', 'chat'];

/** `all` covers every route. */
export function hasScope(granted: readonly Scope[], needed: Scope): boolean {
  return granted.includes(needed) || granted.includes('all');
}
