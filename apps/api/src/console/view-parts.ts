import { SafeHtml, html } from './html';

/** Small pieces the console's views share: a status badge, a time, JSON text, a query string. */

export function taskHref(t: { thread_id: string; task_id: string }): string {
  return `/console/threads/${encodeURIComponent(t.thread_id)}/tasks/${t.task_id}`;
}

export function status(value: string): SafeHtml {
  return html`<span class="status status-${value}">${value}</span>`;
}

export function time(iso: string | null): SafeHtml | string {
  return iso
    ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`
    : '—';
}

/** Progress as text: `3 / 10` and a message when the upstream gives them, else its JSON. */
export function progressText(progress: unknown): string {
  if (progress === null || progress === undefined) return '—';
  if (typeof progress === 'object' && !Array.isArray(progress)) {
    const p = progress as { progress?: unknown; total?: unknown; message?: unknown };
    if (typeof p.progress === 'number') {
      const of = typeof p.total === 'number' ? ` / ${p.total}` : '';
      const message = typeof p.message === 'string' ? ` ${p.message}` : '';
      return `${p.progress}${of}${message}`;
    }
  }
  return json(progress);
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function selected(on: boolean): SafeHtml {
  return new SafeHtml(on ? 'selected' : '');
}

export function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value) params.set(name, value);
  return params.toString();
}
