// RMQ dashboard: plain JavaScript over the JSON routes under <base>/api. Everything that comes from messages
// (bodies, ids, header names and values, errors) is inserted as text nodes (never as HTML), and the page's
// Content-Security-Policy allows only this script.
'use strict';

const base = document.querySelector('meta[name="rmq-base"]').content;
const readOnly = document.querySelector('meta[name="rmq-read-only"]').content !== 'false';
const REFRESH_MS = 2000;
const PAGE = 20;

const state = {
  topic: null,        // selected topic name
  tab: 'dead',
  deadOffset: 0,
  waitingCursors: [null], // cursor of each page seen; the last is the current page's
  previous: {},       // topic -> {at, sent, handled}, for rates
  csrf: null,
};

// ------------------------------------------------------------------ helpers

function h(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value == null || value === false) continue;
    if (key === 'class') e.className = value;
    else if (key.startsWith('on')) e.addEventListener(key.slice(2), value);
    else e.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child == null) continue;
    e.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return e;
}

const $ = (selector) => document.querySelector(selector);

function fill(tbody, rows, columns, empty) {
  tbody.replaceChildren(...(rows.length ? rows : [h('tr', {class: 'empty'}, h('td', {colspan: columns}, empty))]));
}

function num(n) {
  return n == null ? '—' : Number(n).toLocaleString('en-US');
}

function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function relative(iso) {
  if (!iso) return '';
  const s = Math.round((new Date(iso).getTime() - Date.now()) / 1000);
  const a = Math.abs(s);
  if (a < 2) return 'now';
  const m = Math.round(a / 60);
  const hours = Math.round(a / 3600);
  const text = a < 60 ? a + 's' : m < 60 ? m + 'm' : hours < 48 ? hours + 'h' : Math.round(a / 86400) + 'd';
  return s >= 0 ? 'in ' + text : text + ' ago';
}

/** A time as UTC text with how far it is from now beside it. */
function when(iso) {
  if (!iso) return '—';
  return [time(iso), h('span', {class: 'rel'}, relative(iso))];
}

function ms(v) {
  return v == null ? '—' : v < 10 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
}

function notice(text, error) {
  const n = $('#notice');
  n.textContent = text;
  n.className = error ? 'error' : 'ok';
  n.hidden = false;
  clearTimeout(notice.timer);
  notice.timer = setTimeout(() => { n.hidden = true; }, error ? 8000 : 4000);
}

async function api(method, route, body) {
  const headers = {'Accept': 'application/json'};
  if (method === 'POST') {
    headers['Content-Type'] = 'application/json';
    if (state.csrf === null) {
      state.csrf = await (await fetch(base + '/api/csrf', {credentials: 'same-origin'})).json();
    }
    if (state.csrf.headerName) headers[state.csrf.headerName] = state.csrf.token;
  }
  const response = await fetch(base + '/api/' + route, {
    method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data;
  try {
    data = await response.json();
  } catch (e) {
    data = {error: response.status + ' ' + response.statusText};
  }
  if (!response.ok) {
    if (response.status === 403) state.csrf = null; // a stale token: fetch a fresh one next time
    throw new Error((data && data.error) || ('HTTP ' + response.status));
  }
  return data;
}

const enc = encodeURIComponent;

async function act(label, method, route, body, after) {
  try {
    const result = await api(method, route, body);
    notice(label + ': ' + describe(result));
    if (after) await after(result);
    await Promise.all([refresh(), loadTab()]);
  } catch (e) {
    notice(label + ' failed: ' + e.message, true);
  }
}

function describe(result) {
  if (result == null) return 'done';
  if (typeof result.count === 'number') return result.count + ' message' + (result.count === 1 ? '' : 's');
  if (result.state) return result.id + ' is ' + result.state;
  if (result.result) return result.result.toLowerCase().replace('_', ' ');
  if ('removedWaiting' in result) {
    return result.removedWaiting || result.removedRetry ? 'cancelled'
        : result.inFlight ? 'in flight: its current delivery is its last' : result.dead ? 'it is dead (left alone)'
        : 'not found';
  }
  return 'done';
}

// ------------------------------------------------------------------ overview

function rate(topic, meters, now) {
  const prev = state.previous[topic];
  const out = {sent: null, handled: null};
  if (meters && prev && now > prev.at) {
    const seconds = (now - prev.at) / 1000;
    if (meters.sent != null && prev.sent != null) out.sent = Math.max(0, (meters.sent - prev.sent) / seconds);
    if (meters.handled != null && prev.handled != null) out.handled = Math.max(0, (meters.handled - prev.handled) / seconds);
  }
  if (meters) state.previous[topic] = {at: now, sent: meters.sent, handled: meters.handled};
  return out;
}

function rateText(v) {
  return v == null ? '—' : v < 10 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
}

function renderTopics(overview) {
  const now = Date.now();
  const rows = overview.topics.map(({topic: t, meters: m}) => {
    const r = rate(t.name, m, now);
    return h('tr', {'data-topic': t.name, class: 'clickable' + (t.name === state.topic ? ' selected' : ''),
        onclick: () => select(t.name)},
      h('td', {class: 'name'}, t.name),
      h('td', {}, h('span', {class: 'type'}, t.type)),
      h('td', {class: 'num'}, num(t.slots)),
      h('td', {class: 'mode'}, t.mode || '—'),
      h('td', {class: 'num waiting'}, num(t.waiting)),
      h('td', {class: 'num in-flight'}, num(t.inFlight)),
      h('td', {class: 'num retrying'}, num(t.retrying)),
      h('td', {class: 'num dead' + (t.dead > 0 ? ' alarm' : '')}, num(t.dead)),
      h('td', {class: 'oldest-due'}, when(t.oldestDue)),
      h('td', {class: 'num sent-rate'}, overview.meters ? rateText(r.sent) : '—'),
      h('td', {class: 'num handled-rate'}, overview.meters ? rateText(r.handled) : '—'),
      h('td', {class: 'num lateness'}, m && m.latenessP50 != null
          ? ms(m.latenessP50) + ' / ' + ms(m.latenessP90) + ' / ' + ms(m.latenessP99) : '—'));
  });
  fill($('#topics tbody'), rows, 12, 'No topics yet: define one (rmq.topics.*) or add an @RmqListener.');
}

function renderListeners(listeners) {
  const rows = listeners.map((l) => h('tr', {'data-listener': l.id},
    h('td', {class: 'name'}, l.id),
    h('td', {}, l.topic),
    h('td', {}, l.mode),
    h('td', {}, h('span', {class: 'state badge ' + l.state}, l.state)),
    h('td', {class: 'num'}, num(l.concurrency)),
    h('td', {class: 'owned'}, l.mode === 'ORDERLY'
        ? (l.ownedSlots.length ? l.ownedSlots.map((s) => h('span', {
            class: 'slot-chip' + (l.suspendedSlots.includes(s) ? ' suspended' : ''),
            title: l.suspendedSlots.includes(s) ? 'suspended until its head\'s retry' : 'owned'}, s)) : 'none')
        : '—'),
    h('td', {class: 'num' + (l.watchdogRepairs > 0 ? ' alarm' : '')}, num(l.watchdogRepairs)),
    h('td', {class: 'actions'}, readOnly || l.state === 'stopped' ? null : l.state === 'paused'
        ? h('button', {type: 'button', class: 'resume', onclick: () => act('Resume ' + l.id, 'POST',
            'listeners/' + enc(l.id) + '/resume')}, 'Resume')
        : h('button', {type: 'button', class: 'pause', onclick: () => act('Pause ' + l.id, 'POST',
            'listeners/' + enc(l.id) + '/pause')}, 'Pause'))));
  fill($('#listeners tbody'), rows, 8, 'No listeners in this application.');
}

function renderSchedules(schedules) {
  const when = (t) => t ? new Date(t).toLocaleString() : '—';
  const rows = (schedules || []).map((sc) => h('tr', {'data-schedule': sc.name},
    h('td', {class: 'name'}, sc.name),
    h('td', {}, sc.definition),
    h('td', {}, h('span', {class: 'state badge ' + (sc.paused ? 'paused' : 'running')},
        sc.conflict ? 'conflict' : sc.paused ? 'paused' : 'running')),
    h('td', {}, when(sc.nextFiring)),
    h('td', {}, when(sc.lastFiring)),
    h('td', {class: sc.outcome === 'failure' ? 'alarm' : '', title: sc.error || ''},
        sc.outcome ? sc.outcome + ' at ' + when(sc.outcomeAt) + (sc.error ? ': ' + sc.error : '') : '—'),
    h('td', {class: 'actions'}, readOnly ? null : sc.paused
        ? h('button', {type: 'button', class: 'resume', onclick: () => act('Resume schedule ' + sc.name, 'POST',
            'schedules/' + enc(sc.name) + '/resume')}, 'Resume')
        : h('button', {type: 'button', class: 'pause', onclick: () => act('Pause schedule ' + sc.name, 'POST',
            'schedules/' + enc(sc.name) + '/pause')}, 'Pause'))));
  fill($('#schedules tbody'), rows, 7, 'No schedules in this application.');
}

// ------------------------------------------------------------------ one topic

function renderSlots(topic) {
  const slots = topic.perSlot || [];
  const parts = ['waiting', 'inFlight', 'retrying', 'dead'];
  const max = Math.max(1, ...slots.map((s) => parts.reduce((sum, p) => sum + s[p], 0)));
  const bars = slots.map((s) => h('div', {class: 'slot', 'data-slot': s.slot,
      title: 'slot ' + s.slot + ': ' + s.waiting + ' waiting, ' + s.inFlight + ' in flight, ' + s.retrying
          + ' retrying, ' + s.dead + ' dead'},
    h('div', {class: 'bar'}, parts.map((p) => h('span', {class: p}))),
    h('div', {class: 'label'}, String(s.slot)),
    h('div', {class: 'figures'}, parts.map((p) => s[p]).join('·'))));
  // heights set through the CSSOM (allowed under the page's CSP, unlike style attributes)
  slots.forEach((s, i) => {
    bars[i].querySelectorAll('.bar span').forEach((span, j) => {
      span.style.height = (100 * s[parts[j]] / max) + '%';
    });
  });
  $('#slots').replaceChildren(
    h('div', {class: 'legend'}, 'Per slot (', h('i', {class: 'waiting'}), ' waiting · ', h('i', {class: 'inFlight'}),
      ' in flight · ', h('i', {class: 'retrying'}), ' retrying · ', h('i', {class: 'dead'}), ' dead)'),
    h('div', {class: 'slot-bars'}, bars));
}

async function loadTopic() {
  if (!state.topic) return;
  const topic = await api('GET', 'topics/' + enc(state.topic));
  $('#topic-name').textContent = topic.name + ' — ' + topic.type + ', ' + topic.slots + ' slot'
      + (topic.slots === 1 ? '' : 's') + (topic.mode ? ', ' + topic.mode : '');
  $('#waiting-score').textContent = topic.type === 'PRIORITY' ? 'Priority' : 'Due';
  renderSlots(topic);
}

function bodyCell(text) {
  const short = text.length > 80 ? text.slice(0, 80) + '…' : text;
  const full = h('pre', {class: 'body-full', hidden: true}, text);
  const cell = h('td', {class: 'body'}, h('code', {class: 'body-text'}, short));
  if (text.length > 80 || text.includes('\n')) {
    cell.append(' ', h('button', {type: 'button', class: 'link inspect', onclick: (e) => {
      full.hidden = !full.hidden;
      e.target.textContent = full.hidden ? 'inspect' : 'hide';
    }}, 'inspect'));
  }
  cell.append(full);
  return cell;
}

function idCell(id) {
  return h('td', {class: 'id'}, id != null ? h('code', {class: 'id-text'}, id) : '—');
}

/** Every header name with its value (the server cuts long values), as text. */
function headersCell(headers) {
  const entries = Object.entries(headers || {});
  if (!entries.length) return h('td', {class: 'headers'}, '—');
  return h('td', {class: 'headers'}, h('dl', {class: 'header-list'},
    entries.flatMap(([name, value]) => [h('dt', {}, name), h('dd', {}, value)])));
}

/** What names a dead message in requeue and delete: its id when it was sent with one, else its exact body. */
function deadName(m) {
  return m.id != null ? {slot: m.slot, id: m.id} : {slot: m.slot, body: m.bodyBase64};
}

async function loadDead() {
  const page = await api('GET', 'topics/' + enc(state.topic) + '/dead?offset=' + state.deadOffset + '&limit=' + PAGE);
  const rows = page.messages.map((m) => h('tr', {class: 'dead-row', 'data-slot': m.slot},
    h('td', {class: 'num'}, m.slot),
    idCell(m.id),
    bodyCell(m.body),
    headersCell(m.headers),
    h('td', {class: 'error'}, h('code', {}, m.error || '')),
    h('td', {class: 'num'}, m.attempts),
    h('td', {class: 'time'}, when(m.diedAt)),
    h('td', {class: 'actions'}, readOnly ? null : [
      h('button', {type: 'button', class: 'requeue', onclick: () => act('Requeue', 'POST',
          'topics/' + enc(state.topic) + '/dead/requeue', deadName(m))}, 'Requeue'),
      h('button', {type: 'button', class: 'delete danger', onclick: () => confirm('Delete this dead message for good?')
          && act('Delete', 'POST', 'topics/' + enc(state.topic) + '/dead/delete', deadName(m))},
          'Delete')])));
  fill($('#dead tbody'), rows, 8, 'No dead messages.');
  $('#dead-range').textContent = page.messages.length
      ? (page.offset + 1) + '–' + (page.offset + page.messages.length) + ' of ' + num(page.total) : 'none';
  $('#dead-prev').disabled = page.offset === 0;
  $('#dead-next').disabled = page.offset + page.messages.length >= page.total;
}

async function loadWaiting() {
  const cursor = state.waitingCursors[state.waitingCursors.length - 1];
  const page = await api('GET', 'topics/' + enc(state.topic) + '/waiting?limit=' + PAGE
      + (cursor ? '&cursor=' + enc(cursor) : ''));
  const first = (state.waitingCursors.length - 1) * PAGE;
  const rows = page.messages.map((m, i) => h('tr', {class: 'waiting-row'},
    h('td', {class: 'num'}, first + i + 1),
    h('td', {class: 'num'}, m.slot),
    idCell(m.id),
    bodyCell(m.body),
    headersCell(m.headers),
    h('td', {class: m.priority != null ? 'num' : 'time'}, m.priority != null ? num(m.priority) : when(m.dueAt)),
    h('td', {class: 'num'}, m.failedAttempts)));
  fill($('#waiting tbody'), rows, 7, 'Nothing waiting.');
  $('#waiting-range').textContent = page.messages.length
      ? (first + 1) + '–' + (first + page.messages.length) : 'end';
  $('#waiting-first').disabled = state.waitingCursors.length === 1;
  $('#waiting-next').disabled = !page.next;
  $('#waiting-next').dataset.next = page.next || '';
}

async function loadTab() {
  if (!state.topic) return;
  if (state.tab === 'dead') await loadDead();
  if (state.tab === 'waiting') await loadWaiting();
}

function select(topic) {
  if (state.topic !== topic) {
    state.topic = topic;
    state.deadOffset = 0;
    state.waitingCursors = [null];
    $('#find-result').replaceChildren();
  }
  $('#topic').hidden = false;
  document.querySelectorAll('#topics tr[data-topic]').forEach((tr) => tr.classList.toggle('selected',
      tr.dataset.topic === topic));
  Promise.all([loadTopic(), loadTab()]).catch((e) => notice(e.message, true));
}

function showTab(tab) {
  state.tab = tab;
  document.querySelectorAll('.tab').forEach((b) => b.classList.toggle('active', b.dataset.tab === tab));
  document.querySelectorAll('.tab-pane').forEach((p) => { p.hidden = p.id !== 'tab-' + tab; });
  loadTab().catch((e) => notice(e.message, true));
}

function renderFind(r) {
  const headers = Object.entries(r.headers || {});
  const rows = [
    ...(r.id != null ? [['Id', r.id], ['Payload', r.body || '—']] : []),
    ['Headers', headers.length ? headers.map(([name, value]) => name + ': ' + value).join('\n') : '—'],
    ['Slot', r.slot],
    ['Waiting', r.waiting ? (r.priority != null ? 'yes, priority ' + r.priority : 'yes, due ' + time(r.dueAt)) : 'no'],
    ['In flight', r.inFlight ? 'yes' : 'no'],
    ['Retry at', r.retryAt ? time(r.retryAt) : '—'],
    ['Failed attempts', r.failedAttempts],
    ['Dead', r.diedAt ? 'since ' + time(r.diedAt) + ': ' + (r.deadReason || '') : 'no'],
    ['Cancelled', r.cancelled ? 'yes (its current delivery is its last)' : 'no'],
  ];
  $('#find-result').replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]));
}

// ------------------------------------------------------------------ refresh loop

let refreshing = false;

async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    const overview = await api('GET', 'overview');
    renderTopics(overview);
    renderListeners(overview.listeners);
    renderSchedules(overview.schedules);
    if (state.topic) await loadTopic();
    $('#updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    $('#updated').classList.remove('stale');
  } catch (e) {
    $('#updated').textContent = 'not updated: ' + e.message;
    $('#updated').classList.add('stale');
  } finally {
    refreshing = false;
  }
}

function init() {
  $('#mode').textContent = readOnly ? 'read-only' : 'read-write';
  $('#mode').classList.add(readOnly ? 'read-only' : 'read-write');
  $('#footer-mode').textContent = readOnly
      ? 'Read-only: set rmq.dashboard.read-only=false to requeue, delete, cancel, reschedule, pause and resume.' : '';
  document.body.classList.toggle('read-only', readOnly);
  $('#refresh').addEventListener('click', () => { refresh(); loadTab().catch(() => {}); });
  document.querySelectorAll('.tab').forEach((b) => b.addEventListener('click', () => showTab(b.dataset.tab)));
  $('#dead-prev').addEventListener('click', () => {
    state.deadOffset = Math.max(0, state.deadOffset - PAGE);
    loadDead().catch((e) => notice(e.message, true));
  });
  $('#dead-next').addEventListener('click', () => {
    state.deadOffset += PAGE;
    loadDead().catch((e) => notice(e.message, true));
  });
  $('#dead-requeue-all').addEventListener('click', () => confirm('Requeue every dead message of ' + state.topic + '?')
      && act('Requeue all', 'POST', 'topics/' + enc(state.topic) + '/dead/requeue-all'));
  $('#dead-purge').addEventListener('click', () => confirm('Delete every dead message of ' + state.topic + ' for good?')
      && act('Purge', 'POST', 'topics/' + enc(state.topic) + '/dead/purge'));
  $('#waiting-first').addEventListener('click', () => {
    state.waitingCursors = [null];
    loadWaiting().catch((e) => notice(e.message, true));
  });
  $('#waiting-next').addEventListener('click', (e) => {
    if (e.target.dataset.next) state.waitingCursors.push(e.target.dataset.next);
    loadWaiting().catch((err) => notice(err.message, true));
  });
  // the find form names a message by its body or by the id it was sent with
  const findBy = () => $('#find-by').value === 'id' ? 'id' : 'body';
  $('#find-form').addEventListener('submit', (e) => {
    e.preventDefault();
    api('GET', 'topics/' + enc(state.topic) + '/find?' + findBy() + '=' + enc($('#find-body').value))
        .then(renderFind).catch((err) => notice('Find failed: ' + err.message, true));
  });
  $('#cancel').addEventListener('click', () => act('Cancel', 'POST', 'topics/' + enc(state.topic) + '/cancel',
      {[findBy()]: $('#find-body').value}));
  $('#reschedule').addEventListener('click', () => act('Reschedule', 'POST', 'topics/' + enc(state.topic)
      + '/reschedule', {[findBy()]: $('#find-body').value, when: $('#when').value}));
  if (!readOnly) {
    fetch(base + '/api/csrf', {credentials: 'same-origin'}).then((r) => r.json())
        .then((t) => { state.csrf = t; }).catch(() => {});
  }
  refresh();
  setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
}

init();
