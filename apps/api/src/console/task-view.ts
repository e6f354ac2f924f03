import { isTerminal } from '@app/common';
import type { TaskView } from '@app/views';
import { SafeHtml, html } from './html';
import { Question, questionForm } from './question-form';
import { json, progressText, query, status, time } from './view-parts';

/** One task: everything the API's detail shows, as text, plus its live timeline and actions. */
export function taskView(task: TaskView, answerable: boolean): SafeHtml {
  const base = `/console/api/threads/${encodeURIComponent(task.thread_id)}/tasks/${task.task_id}`;
  const requests = task.input_required?.requests ?? {};
  const questions = Object.entries(requests);
  return html`<div
    class="task"
    data-task-base="${base}"
    data-status="${task.status}"
    data-updated-at="${task.updated_at}"
  >
    <dl class="facts">
      <dt>Status</dt>
      <dd id="task-status">
        ${status(task.status)}${task.cancel_requested ? ' (cancel requested)' : ''}
      </dd>
      <dt>Toolset</dt>
      <dd>${task.toolset}</dd>
      <dt>Thread</dt>
      <dd><a href="/console/tasks?${query({ thread: task.thread_id })}">${task.thread_id}</a></dd>
      <dt>Progress</dt>
      <dd id="task-progress">${progressText(task.progress)}</dd>
      <dt>Created</dt>
      <dd>${time(task.created_at)}</dd>
      <dt>Submitted</dt>
      <dd>${time(task.submitted_at)}</dd>
      <dt>Ended</dt>
      <dd>${time(task.completed_at)}</dd>
      <dt>Updated</dt>
      <dd>${time(task.updated_at)}</dd>
      ${
        task.tracking_degraded
          ? html`<dt>Tracking</dt>
              <dd>degraded</dd>`
          : ''
      }
      ${
        task.metadata
          ? html`<dt>Metadata</dt>
              <dd><pre>${json(task.metadata)}</pre></dd>`
          : ''
      }
    </dl>
    ${
      isTerminal(task.status)
        ? ''
        : html`<form class="cancel" data-confirm="Cancel this task?">
            <button type="submit" class="danger">Cancel task</button>
            <div class="outcome" role="status" aria-live="polite"></div>
          </form>`
    }
    ${
      task.error
        ? html`<section class="error">
            <h2>Error</h2>
            <p><code>${task.error.code}</code> ${task.error.message}</p>
          </section>`
        : ''
    }
    ${
      task.last_error
        ? html`<section class="error">
            <h2>Last error</h2>
            <p>${task.last_error}</p>
          </section>`
        : ''
    }
    ${
      questions.length > 0
        ? html`<section class="questions">
            <h2>Questions</h2>
            ${questions.map(([key, q]) => questionForm(key, q, answerable))}
          </section>`
        : ''
    }
    ${resultSection(task)}
    ${
      task.result_artifact !== null
        ? html`<section class="artifact">
            <h2>Artifact</h2>
            <pre>${json(task.result_artifact)}</pre>
          </section>`
        : ''
    }
    <section class="timeline">
      <h2>Timeline</h2>
      <ol id="timeline" data-events="${base}/events"></ol>
    </section>
  </div>`;
}

/** What an answer link shows: the toolset's name and the questions, nothing else of the task. */
export function answerView(
  toolset: string,
  token: string,
  questions: [string, Question][],
): SafeHtml {
  return html`<div class="answer" data-answer-token="${token}">
    <p>The tool <b>${toolset}</b> asks:</p>
    ${questions.map(([key, q]) => questionForm(key, q, true))}
  </div>`;
}

/**
 * The result: its text blocks as text, then the whole result as JSON; a result too large to keep
 * has only its preview (the first RESULT_PREVIEW_CHARS characters of its JSON).
 */
function resultSection(task: TaskView): SafeHtml | string {
  if (task.result_truncated || (task.result === null && task.result_preview !== null)) {
    return html`<section class="result">
      <h2>Result (too large to keep; its beginning)</h2>
      <pre id="result-preview">${task.result_preview ?? ''}</pre>
    </section>`;
  }
  if (task.result === null) return '';
  const content = (task.result as { content?: unknown }).content;
  const texts = Array.isArray(content)
    ? (content as unknown[])
        .map((c) => c as { type?: unknown; text?: unknown } | null)
        .filter((c) => c?.type === 'text' && typeof c.text === 'string')
        .map((c) => c!.text as string)
    : [];
  return html`<section class="result">
    <h2>Result</h2>
    ${texts.length > 0 ? html`<pre id="result-text">${texts.join('\n')}</pre>` : ''}
    <details ${new SafeHtml(texts.length > 0 ? '' : 'open')}>
      <summary>As JSON</summary>
      <pre id="result-json">${json(task.result)}</pre>
    </details>
  </section>`;
}
