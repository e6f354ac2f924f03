import type { ThreadSummaryRow } from '@app/persistence';
import type { TaskSummaryView } from '@app/views';
import { CONSOLE_ASSET_VERSION } from './console-assets';
import { SafeHtml, html } from './html';
import { progressText, query, selected, status, taskHref, time } from './view-parts';

/** What every signed-in page knows besides its own content. */
export interface PageContext {
  userId: string;
  csrfToken: string;
  isAdmin: boolean;
}

const STATUSES = [
  'active',
  'terminal',
  'queued',
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
];

/** The document around every view; `ctx` null for the pages seen without a session. */
export function page(title: string, ctx: PageContext | null, body: SafeHtml): string {
  const nav = ctx
    ? html`<nav>
        <a href="/console/tasks">Tasks</a>
        <a href="/console/threads">Threads</a>
        ${ctx.isAdmin ? html`<a href="/console/admin">Operators</a>` : ''}
        <span class="user">Signed in as <b>${ctx.userId}</b></span>
        <button type="button" class="secondary" data-sign-out>Sign out</button>
      </nav>`
    : html`<nav><span class="brand">MCP Task Gateway</span></nav>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${ctx ? html`<meta name="csrf-token" content="${ctx.csrfToken}" />` : ''}
        <title>${title} &middot; Task console</title>
        <link rel="stylesheet" href="/console/assets/console.css?v=${CONSOLE_ASSET_VERSION}" />
        <script src="/console/assets/console.js?v=${CONSOLE_ASSET_VERSION}" defer></script>
      </head>
      <body>
        <header>${nav}</header>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`.text;
}

export function signInView(): SafeHtml {
  return html`<form id="sign-in" class="card" novalidate>
    <p>
      Paste an API key (<code>mtg_&hellip;</code>) or, in a JWT deployment, a token. It is exchanged
      for a session cookie and not kept by this page.
    </p>
    <label for="token">API key or token</label>
    <input type="password" id="token" name="token" autocomplete="off" required />
    <button type="submit">Sign in</button>
    <div class="outcome" role="status" aria-live="polite"></div>
  </form>`;
}

/** The task list's filters, as the query string carries them. */
export interface ListFilters {
  status?: string;
  toolset?: string;
  thread?: string;
}

export function taskListView(
  items: TaskSummaryView[],
  filters: ListFilters,
  toolsets: string[],
  nextCursor: string | null,
): SafeHtml {
  const next = nextCursor
    ? html`<a class="next" href="/console/tasks?${query({ ...filters, cursor: nextCursor })}"
        >Next page &rarr;</a
      >`
    : '';
  return html`<form class="filters" method="get" action="/console/tasks">
      <label
        >Status
        <select name="status">
          <option value="">any</option>
          ${STATUSES.map((s) => html`<option ${selected(s === filters.status)}>${s}</option>`)}
        </select></label
      >
      <label
        >Toolset
        <select name="toolset">
          <option value="">any</option>
          ${toolsets.map((t) => html`<option ${selected(t === filters.toolset)}>${t}</option>`)}
        </select></label
      >
      <label>Thread <input name="thread" value="${filters.thread ?? ''}" maxlength="128" /></label>
      <button type="submit">Filter</button>
    </form>
    ${
      items.length === 0
        ? html`<p class="empty">No tasks match.</p>`
        : html`<table class="tasks">
            <thead>
              <tr>
                <th>Task</th>
                <th>Thread</th>
                <th>Toolset</th>
                <th>Status</th>
                <th>Progress</th>
                <th>Created</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              ${items.map(
                (t) =>
                  html`<tr data-task-id="${t.task_id}">
                    <td><a href="${taskHref(t)}">${t.task_id}</a></td>
                    <td>
                      <a href="/console/tasks?${query({ thread: t.thread_id })}">${t.thread_id}</a>
                    </td>
                    <td>${t.toolset}</td>
                    <td>${status(t.status)}</td>
                    <td>${progressText(t.progress)}</td>
                    <td>${time(t.created_at)}</td>
                    <td>${time(t.updated_at)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${next}`;
}

export function threadListView(threads: ThreadSummaryRow[]): SafeHtml {
  if (threads.length === 0) return html`<p class="empty">No threads yet.</p>`;
  return html`<table class="threads">
    <thead>
      <tr>
        <th>Thread</th>
        <th>Tasks</th>
        <th>Active</th>
        <th>Last task</th>
      </tr>
    </thead>
    <tbody>
      ${threads.map(
        (t) =>
          html`<tr>
            <td><a href="/console/tasks?${query({ thread: t.threadId })}">${t.threadId}</a></td>
            <td>${t.tasks}</td>
            <td>${t.active}</td>
            <td>${time(t.lastTaskAt.toISOString())}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** A problem (RFC 9457) as a page, for the console's pages: the same fields, as text. */
export function problemView(problem: {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
}): SafeHtml {
  return html`<section class="problem" data-problem-type="${problem.type}">
    <p><b>${problem.status} ${problem.title}</b></p>
    <p class="detail">${problem.detail}</p>
    ${
      problem.errors?.length
        ? html`<ul>
            ${problem.errors.map((e) => html`<li><code>${e.path}</code> ${e.message}</li>`)}
          </ul>`
        : ''
    }
    <p><a href="/console/tasks">Back to the console</a></p>
  </section>`;
}
