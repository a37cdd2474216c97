// Shared pieces of the console's pages: polling, errors, tables, confirmation dialogs, badges.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  reload: () => void;
}

/** Loads with `load`, again every `intervalMs` (when given) and on reload(); the last good data stays while a later load fails. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], intervalMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    let live = true;
    let timer: number | undefined;
    const run = async () => {
      try {
        const value = await load();
        if (!live) return;
        setData(value);
        setError(undefined);
      } catch (caught) {
        if (live) setError(caught instanceof Error ? caught : new Error(String(caught)));
      }
      if (live && intervalMs) timer = window.setTimeout(run, intervalMs);
    };
    void run();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [...deps, tick]);
  return { data, error, reload };
}

export function ErrorBox({ error }: { error: Error | string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {typeof error === 'string' ? error : error.message}
    </p>
  );
}

export function Loading({ loaded }: { loaded: Loaded<unknown> }) {
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  return loaded.data === undefined ? <p aria-live="polite">Loading…</p> : null;
}

const STATE_CLASS: Record<string, string> = {
  COMPLETED: 'ok',
  ONBOARDED: 'ok',
  INSTANTIATED: 'ok',
  ENABLED: 'ok',
  REACHABLE: 'ok',
  ACKNOWLEDGED: 'ok',
  FAILED_TEMP: 'bad',
  FAILED: 'bad',
  ERROR: 'bad',
  UNREACHABLE: 'bad',
  CRITICAL: 'bad',
  MAJOR: 'bad',
  PROCESSING: 'busy',
  STARTING: 'busy',
  ROLLING_BACK: 'busy',
  FAILING: 'busy',
  PROCESSING_ONBOARDING: 'busy',
  UPLOADING: 'busy',
};

export function Badge({ value }: { value: string | undefined }) {
  if (!value) return <span class="badge">—</span>;
  return <span class={`badge ${STATE_CLASS[value] ?? ''}`}>{value}</span>;
}

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
}

export function Table<T>({ caption, rows, columns, empty }: { caption: string; rows: T[]; columns: Array<Column<T>>; empty?: string }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column.title}>
              {column.title}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={columns.length}>{empty ?? 'None'}</td>
          </tr>
        ) : (
          rows.map((row, i) => (
            <tr key={i}>
              {columns.map((column) => (
                <td key={column.title}>{column.cell(row)}</td>
              ))}
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

/** A modal dialog (the browser's <dialog>: focus kept inside, Escape closes it). */
export function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} aria-label={title} onClose={onClose}>
      <h2>{title}</h2>
      {children}
    </dialog>
  );
}

/**
 * A form in a dialog whose submit runs `action`; its failure is shown in the dialog, its success
 * closes it. `confirm` is the submit button's text ("Instantiate", "Terminate", ...).
 */
export function ActionDialog({
  title,
  confirm,
  danger,
  onClose,
  action,
  children,
}: {
  title: string;
  confirm: string;
  danger?: boolean;
  onClose: () => void;
  action: (form: FormData) => Promise<void>;
  children?: ComponentChildren;
}) {
  const [error, setError] = useState<Error | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action(new FormData(event.currentTarget as HTMLFormElement));
      onClose();
    } catch (caught) {
      setError(caught instanceof Error ? caught : new Error(String(caught)));
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <form onSubmit={submit}>
        {children}
        <ErrorBox error={error} />
        <div class="buttons">
          <button type="submit" class={danger ? 'danger' : 'primary'} disabled={busy}>
            {confirm}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** A labelled field. */
export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    <div class="field">
      {/* biome-ignore lint/a11y/noLabelWithoutControl: the control is the child the caller passes, which the label wraps. */}
      <label>
        <span>{label}</span>
        {children}
      </label>
      {hint ? <small>{hint}</small> : null}
    </div>
  );
}

/** Parses an optional JSON text field; names the field when it is not JSON. */
export function jsonField(form: FormData, name: string, label: string): unknown {
  const text = String(form.get(name) ?? '').trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${label} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function when(time: string | undefined): string {
  return time ? new Date(time).toLocaleString() : '—';
}

export function Json({ value, label }: { value: unknown; label: string }) {
  if (value === undefined) return null;
  return (
    <details>
      <summary>{label}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

export const short = (id: string | undefined) => (id ? id.slice(0, 8) : '—');

/** A labelled select of fixed choices: [value, text] pairs. */
export function Choice({ label, name, options }: { label: string; name: string; options: Array<[string, string]> }) {
  return (
    <Field label={label}>
      <select name={name}>
        {options.map(([value, text]) => (
          <option value={value} key={value}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** An action a page runs outside a dialog (a button in a table): its failure, for an ErrorBox, and the reload after it. */
export function useAction(after: () => void): { error: Error | undefined; run: (action: () => Promise<unknown>) => Promise<void> } {
  const [error, setError] = useState<Error | undefined>(undefined);
  const run = async (action: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await action();
      after();
    } catch (caught) {
      setError(caught instanceof Error ? caught : new Error(String(caught)));
    }
  };
  return { error, run };
}
