import type { DeadDeliveryRow, OperatorActionRow, StuckTaskRow } from '@app/persistence';
import { SafeHtml, html } from './html';
import { status, time } from './view-parts';

/** The operator view: stuck tasks and dead letters with their actions, and the operator log. */
export function adminView(
  stuck: StuckTaskRow[],
  dead: DeadDeliveryRow[],
  actions: OperatorActionRow[],
): SafeHtml {
  const reason = (required: boolean) =>
    html`<input
      name="reason"
      placeholder="${required ? 'reason (required)' : 'reason'}"
      maxlength="1000"
      ${required ? new SafeHtml('required') : ''}
    />`;
  return html`<section>
      <h2>Stuck tasks</h2>
      <p class="note">
        Not ended and created over 5 minutes ago. Each action is confirmed and recorded in the
        operator log.
      </p>
      ${
        stuck.length === 0
          ? html`<p class="empty">None.</p>`
          : html`<table class="stuck">
              <thead>
                <tr>
                  <th>Task</th>
                  <th>Status</th>
                  <th>Toolset</th>
                  <th>Idle</th>
                  <th>Errors</th>
                  <th>Leased</th>
                  <th>Last error</th>
                  <th>Actions</th>
                </tr>
              </thead>
              <tbody>
                ${stuck.map(
                  (t) =>
                    html`<tr data-task-id="${t.id}">
                      <td>${t.id}</td>
                      <td>${status(t.status)}</td>
                      <td>${t.toolset}</td>
                      <td>${t.idle_seconds} s</td>
                      <td>${t.consecutive_errors}</td>
                      <td>${t.leased ? 'yes' : 'no'}</td>
                      <td class="clip">${t.last_error ?? ''}</td>
                      <td>
                        <form
                          class="admin"
                          data-action="/console/api/admin/tasks/${t.id}/redrive"
                          data-confirm="Redrive ${t.id}?"
                        >
                          ${reason(false)}<button type="submit">Redrive</button>
                        </form>
                        <form
                          class="admin"
                          data-action="/console/api/admin/tasks/${t.id}/fail"
                          data-confirm="Fail ${t.id}? This ends the task."
                        >
                          ${reason(true)}<button type="submit" class="danger">Fail</button>
                        </form>
                        <div class="outcome" role="status"></div>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </section>
    <section>
      <h2>Dead letters</h2>
      ${
        dead.length === 0
          ? html`<p class="empty">None.</p>`
          : html`<table class="dead">
              <thead>
                <tr>
                  <th>Delivery</th>
                  <th>Event</th>
                  <th>Task</th>
                  <th>Attempts</th>
                  <th>Last answer</th>
                  <th>Replay</th>
                </tr>
              </thead>
              <tbody>
                ${dead.map(
                  (d) =>
                    html`<tr>
                      <td>${d.id}</td>
                      <td>${d.event_type}</td>
                      <td>${d.task_id}</td>
                      <td>${d.attempts}</td>
                      <td class="clip">${d.last_status_code ?? ''} ${d.last_error ?? ''}</td>
                      <td>
                        <form
                          class="admin"
                          data-action="/console/api/admin/webhook-deliveries/${d.id}/replay"
                          data-confirm="Replay delivery ${d.id}?"
                        >
                          ${reason(false)}<button type="submit">Replay</button>
                        </form>
                        <div class="outcome" role="status"></div>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </section>
    <section>
      <h2>Operator log</h2>
      ${
        actions.length === 0
          ? html`<p class="empty">No actions yet.</p>`
          : html`<table class="actions">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Actor</th>
                  <th>Via</th>
                  <th>Action</th>
                  <th>Target</th>
                  <th>Reason</th>
                  <th>Outcome</th>
                </tr>
              </thead>
              <tbody>
                ${actions.map(
                  (a) =>
                    html`<tr>
                      <td>${time(a.created_at.toISOString())}</td>
                      <td>${a.actor}</td>
                      <td>${a.via}</td>
                      <td>${a.action}</td>
                      <td>${a.target}</td>
                      <td>${a.reason ?? ''}</td>
                      <td>${a.outcome}${a.detail ? `: ${a.detail}` : ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </section>`;
}
