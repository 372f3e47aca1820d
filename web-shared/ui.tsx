/** Small form and state pieces for the web apps: a labelled field, a load/error line, a button that asks once more. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export function Field({ label, hint, children }: { label: string; hint?: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
      {hint !== undefined && <small>{hint}</small>}
    </label>
  );
}

export function Status({ loading, error }: { loading: boolean; error: string | null }) {
  if (error !== null) return <p class="error" role="alert">{error}</p>;
  return loading ? <p class="muted" role="status">Loading…</p> : null;
}

/** Runs `onConfirm` only after a second, explicit click. */
export function ConfirmButton({ label, question, onConfirm }: { label: string; question: string; onConfirm: () => void }) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yes.current?.focus();
  }, [asking]);
  if (!asking) return <button type="button" class="danger" onClick={() => setAsking(true)}>{label}</button>;
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button type="button" ref={yes} class="danger" onClick={() => { setAsking(false); onConfirm(); }}>Yes, {label.toLowerCase()}</button>
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  );
}

/** An action's busy state and its error in words. */
export function useAction(): { busy: boolean; error: string | null; run: (action: () => Promise<unknown>) => Promise<boolean> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
