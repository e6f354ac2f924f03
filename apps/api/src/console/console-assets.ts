import { createHash } from 'node:crypto';

/**
 * The console's only script, served from the API itself (no CDN, no build step, no framework):
 * the pages are rendered on the server, and this adds what needs a browser: sign-in and sign-out,
 * JSON posts with the CSRF header (cancel, answers, operator actions) showing the API's answer
 * (202, or the problem's status, detail and errors), and the live timeline from the event stream.
 * Everything it writes into the page goes through textContent, never innerHTML.
 */
export const CONSOLE_JS = `'use strict';
(function () {
  var meta = document.querySelector('meta[name="csrf-token"]');
  var csrf = meta ? meta.getAttribute('content') : '';

  function send(method, url, body) {
    var headers = { Accept: 'application/json' };
    if (csrf) headers['X-CSRF-Token'] = csrf;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    return fetch(url, {
      method: method,
      headers: headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        return { status: res.status, ok: res.ok, data: data };
      });
    }, function () {
      return { status: 0, ok: false, data: { title: 'Network error', detail: 'The gateway could not be reached.' } };
    });
  }

  function show(box, answer, okText) {
    if (!box) return;
    box.textContent = '';
    box.className = 'outcome ' + (answer.ok ? 'ok' : 'bad');
    var head = document.createElement('p');
    var data = answer.data || {};
    head.textContent = answer.ok
      ? answer.status + ' ' + okText
      : answer.status + ' ' + (data.title || 'Error') + ': ' + (data.detail || '');
    box.appendChild(head);
    if (!answer.ok && Array.isArray(data.errors)) {
      var list = document.createElement('ul');
      data.errors.forEach(function (e) {
        var item = document.createElement('li');
        item.textContent = (e.path || '(body)') + ' ' + e.message;
        list.appendChild(item);
      });
      box.appendChild(list);
    }
  }

  var signIn = document.getElementById('sign-in');
  if (signIn) {
    signIn.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var input = signIn.querySelector('#token');
      send('POST', '/console/session', { token: input.value }).then(function (answer) {
        input.value = '';
        if (!answer.ok) return show(signIn.querySelector('.outcome'), answer, '');
        var next = new URLSearchParams(location.search).get('next') || '';
        location.assign(/^\\/console\\/[^/\\\\]/.test(next) ? next : '/console/tasks');
      });
    });
  }

  document.querySelectorAll('[data-sign-out]').forEach(function (button) {
    button.addEventListener('click', function () {
      send('DELETE', '/console/session').then(function () { location.assign('/console/sign-in'); });
    });
  });

  var taskBox = document.querySelector('[data-task-base]');
  var taskBase = taskBox ? taskBox.getAttribute('data-task-base') : '';

  var cancel = document.querySelector('form.cancel');
  if (cancel) {
    cancel.addEventListener('submit', function (ev) {
      ev.preventDefault();
      if (!window.confirm(cancel.getAttribute('data-confirm'))) return;
      send('POST', taskBase + '/cancel').then(function (answer) {
        show(cancel.querySelector('.outcome'), answer, 'Cancel requested.');
      });
    });
  }

  function collect(form) {
    var content = {};
    form.querySelectorAll('[data-field]').forEach(function (el) {
      var name = el.getAttribute('data-field');
      var type = el.getAttribute('data-type');
      if (type === 'boolean') { content[name] = el.checked; return; }
      if (type === 'array') {
        content[name] = Array.prototype.map.call(el.selectedOptions, function (o) { return o.value; });
        return;
      }
      var value = el.value;
      if (value === '') return;
      if (type === 'number' || type === 'integer') {
        var n = Number(value);
        content[name] = isNaN(n) ? value : n;
        return;
      }
      if (el.getAttribute('data-format') === 'date-time') {
        var d = new Date(value);
        content[name] = isNaN(d.getTime()) ? value : d.toISOString();
        return;
      }
      content[name] = value;
    });
    return content;
  }

  document.querySelectorAll('form.question').forEach(function (form) {
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      var action = (ev.submitter && ev.submitter.value) || 'accept';
      var answer = { action: action };
      if (action === 'accept') answer.content = collect(form);
      var responses = {};
      responses[form.getAttribute('data-question-key')] = answer;
      var link = form.closest('[data-answer-token]');
      var sent = link
        ? send('POST', '/console/answer', { token: link.getAttribute('data-answer-token'), responses: responses })
        : send('POST', taskBase + '/input', { responses: responses });
      sent.then(function (result) {
        show(form.querySelector('.outcome'), result, 'Stored: the answer goes to the tool (' + action + ').');
        if (!result.ok) return;
        form.classList.add('answered');
        form.querySelectorAll('button, input, select').forEach(function (el) { el.disabled = true; });
      });
    });
  });

  document.querySelectorAll('form.admin').forEach(function (form) {
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      if (!window.confirm(form.getAttribute('data-confirm'))) return;
      var reason = form.querySelector('[name="reason"]');
      var body = reason && reason.value ? { reason: reason.value } : {};
      send('POST', form.getAttribute('data-action'), body).then(function (answer) {
        var box = form.parentNode.querySelector('.outcome');
        show(box, answer, 'Done: ' + ((answer.data && answer.data.outcome) || '') + '.');
        if (answer.ok) location.reload();
      });
    });
  });

  function progressText(p) {
    if (p && typeof p === 'object' && typeof p.progress === 'number') {
      return p.progress + (typeof p.total === 'number' ? ' / ' + p.total : '') +
        (typeof p.message === 'string' ? ' ' + p.message : '');
    }
    return p === null || p === undefined ? '—' : JSON.stringify(p);
  }

  var timeline = document.getElementById('timeline');
  if (timeline && taskBox && window.EventSource) {
    var shownStatus = taskBox.getAttribute('data-status');
    var shownAt = taskBox.getAttribute('data-updated-at') || '';
    var stream = new EventSource(timeline.getAttribute('data-events'));
    ['task.working', 'task.input_required', 'task.progress', 'task.completed', 'task.failed', 'task.cancelled']
      .forEach(function (type) {
        stream.addEventListener(type, function (message) {
          var event;
          try { event = JSON.parse(message.data); } catch (e) { return; }
          var item = document.createElement('li');
          var time = document.createElement('time');
          time.textContent = String(event.created_at).replace('T', ' ').replace(/\\.\\d+Z$/, 'Z');
          item.appendChild(time);
          var what = document.createElement('span');
          what.textContent = type === 'task.progress'
            ? ' progress ' + progressText(event.data.progress)
            : ' ' + event.data.previous_status + ' → ' + event.task.status;
          item.appendChild(what);
          item.className = 'event ' + type.replace('.', '-');
          timeline.appendChild(item);
          var newer = String(event.task.updated_at) > shownAt;
          if (!newer) return;
          if (type === 'task.progress') {
            document.getElementById('task-progress').textContent = progressText(event.data.progress);
          } else if (event.task.status !== shownStatus) {
            stream.close();
            location.reload();
          }
        });
      });
  }
})();
`;

export const CONSOLE_CSS = `
:root { --fg: #1c2430; --muted: #5b6675; --line: #d9dee5; --bg: #f6f7f9; --accent: #2457c5; --bad: #b42318; --ok: #12703a; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { background: #fff; border-bottom: 1px solid var(--line); }
nav { display: flex; gap: 16px; align-items: center; max-width: 1200px; margin: 0 auto; padding: 10px 20px; }
nav a { color: var(--accent); text-decoration: none; font-weight: 600; }
nav .user { margin-left: auto; color: var(--muted); }
nav .brand { font-weight: 700; }
main { max-width: 1200px; margin: 0 auto; padding: 8px 20px 40px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 24px; } h3 { font-size: 14px; margin: 0 0 4px; }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f5; font-weight: 600; }
td.clip { max-width: 280px; overflow-wrap: anywhere; }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
pre { background: #fff; border: 1px solid var(--line); padding: 8px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 360px; overflow: auto; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; background: #e5e9f0; font-weight: 600; }
.status-completed { background: #d7f2e1; color: var(--ok); }
.status-failed { background: #fde2e0; color: var(--bad); }
.status-cancelled { background: #ececec; color: #555; }
.status-input_required { background: #fff1c2; color: #7a5a00; }
.status-working { background: #dbe7ff; color: #1d4aa8; }
.filters { display: flex; gap: 12px; align-items: end; margin-bottom: 12px; flex-wrap: wrap; }
.filters label { display: flex; flex-direction: column; color: var(--muted); }
.card, .question, .problem { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 8px 0; max-width: 640px; }
.question.answered { opacity: 0.7; }
.field { display: flex; flex-direction: column; margin: 8px 0; gap: 2px; }
.field.checkbox { flex-direction: row; align-items: center; gap: 8px; }
.field small, .note, .empty { color: var(--muted); }
.req { color: var(--bad); }
input, select, button { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 4px; }
button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
button.secondary { background: #fff; color: var(--fg); border-color: var(--line); }
button.danger { background: var(--bad); border-color: var(--bad); }
button:disabled { opacity: 0.5; cursor: default; }
.actions { display: flex; gap: 8px; margin-top: 8px; }
.outcome.ok { color: var(--ok); } .outcome.bad { color: var(--bad); }
.outcome p { margin: 6px 0 0; }
dl.facts { display: grid; grid-template-columns: 120px 1fr; gap: 4px 12px; background: #fff; border: 1px solid var(--line); padding: 12px 16px; max-width: 760px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
form.cancel, form.admin { display: inline-flex; gap: 6px; margin: 8px 8px 0 0; }
#timeline { background: #fff; border: 1px solid var(--line); padding: 8px 8px 8px 32px; max-width: 760px; min-height: 24px; }
#timeline time { color: var(--muted); font-family: ui-monospace, monospace; font-size: 12px; }
.error p { color: var(--bad); }
.next { display: inline-block; margin-top: 12px; }
`;

/** Changes whenever the assets do, so pages can reference them with a long cache lifetime. */
export const CONSOLE_ASSET_VERSION = createHash('sha256')
  .update(CONSOLE_JS)
  .update(CONSOLE_CSS)
  .digest('hex')
  .slice(0, 12);
