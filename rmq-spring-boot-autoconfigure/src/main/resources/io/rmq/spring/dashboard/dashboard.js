// RMQ dashboard: plain JavaScript over the JSON routes under <base>/api. Everything that comes from messages
// (bodies, ids, header names and values, errors) and from instances is inserted as text nodes (never as HTML), and
// the page's Content-Security-Policy allows only this script and its style sheet (charts are SVG elements styled
// by classes, sizes set through the CSSOM, never style attributes).
//
// Addresses live in the URL fragment, so the server serves one page: #/ (overview), #/topics/<name>[/<tab>]
// (tab: dead, retries, in-flight, waiting, find), #/instances/<id>. Back, forward and reload keep the view.
'use strict';

const base = document.querySelector('meta[name="rmq-base"]').content;
const readOnly = document.querySelector('meta[name="rmq-read-only"]').content !== 'false';
const REFRESH_MS = 2000;
const REDIS_EVERY = 5;      // refreshes between two reads of the Redis figures
const HISTORY_MS = 30000;   // between two reads of a topic's history
const PAGE = 20;
const TABS = ['dead', 'retries', 'in-flight', 'waiting', 'find'];
/** rmq.delivery.lateness's buckets (MicrometerInstrumentation.LATENESS_BUCKETS): a percentile equal to one is a bound. */
const LATENESS_BUCKETS = new Set([1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 3e4, 6e4, 3e5, 3.6e6]);
/** More slots than this are drawn as a heat grid instead of bars. */
const BAR_SLOTS = 64;

const state = {
  route: {view: 'overview'},
  deadOffset: 0,
  deadFilter: {error: '', prefix: ''},
  deadSelected: new Map(),  // key -> how the message is named in requeue-selected / delete-selected
  deadMatches: null,        // {total, capped} of the current dead search, null without one (for "… matching")
  retriesOffset: 0,
  retriesSelected: new Map(), // key -> how the retry is named in retries/run-now and retries/delete
  inFlightOffset: 0,
  waitingCursors: [null],   // cursor of each page seen; the last is the current page's
  resolution: 'minute',
  historyAt: 0,
  refreshes: 0,
  pauses: null,             // the cluster-wide pauses, null while unknown or not available
  previous: {},             // topic -> {at, sent, handled}, for rates
  csrf: null,
};

// ------------------------------------------------------------------ helpers

function h(tag, props, ...children) {
  const e = document.createElement(tag);
  return build(e, props, children);
}

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, props, ...children) {
  return build(document.createElementNS(SVG, tag), props, children);
}

function build(e, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value == null || value === false) continue;
    if (key === 'class') e.setAttribute('class', value);
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
const enc = encodeURIComponent;

/** Replaces a table's rows; the control that had the focus keeps it (tables are redrawn every refresh). */
function fill(tbody, rows, columns, empty) {
  const focused = focusIn(tbody);
  tbody.replaceChildren(...(rows.length ? rows : [h('tr', {class: 'empty'}, h('td', {colspan: columns}, empty))]));
  if (focused) {
    const row = [...tbody.rows].find((tr) => JSON.stringify(tr.dataset) === focused.row);
    const control = row && row.querySelectorAll(FOCUSABLE)[focused.index];
    if (control) control.focus();
  }
}

const FOCUSABLE = 'a[href], button, input, select, textarea';

/** Which row (by its data attributes) and which of its controls has the focus, or null. */
function focusIn(tbody) {
  const active = document.activeElement;
  const tr = active && tbody.contains(active) ? active.closest('tr') : null;
  if (!tr) return null;
  return {row: JSON.stringify(tr.dataset), index: [...tr.querySelectorAll(FOCUSABLE)].indexOf(active)};
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
  if (Math.abs(s) < 2) return 'now';
  const text = duration(Math.abs(s) * 1000, true);
  return s >= 0 ? 'in ' + text : text + ' ago';
}

/** A time as UTC text with how far it is from now beside it. */
function when(iso) {
  if (!iso) return '—';
  return [time(iso), h('span', {class: 'rel'}, relative(iso))];
}

function round(v) {
  return v < 10 ? String(Math.round(v * 10) / 10) : Math.round(v).toLocaleString('en-US');
}

/** A duration in ms as people say it: "0.4 ms", "250 ms", "1.5 s", "11 min", "3 h", "2 d". */
function duration(v, whole) {
  if (v == null) return '—';
  const r = whole ? (x) => Math.round(x).toLocaleString('en-US') : round;
  if (v < 1000) return (whole ? Math.round(v) : round(v)) + ' ms';
  if (v < 60e3) return r(v / 1e3) + ' s';
  if (v < 3600e3) return r(v / 60e3) + ' min';
  if (v < 48 * 3600e3) return r(v / 3600e3) + ' h';
  return r(v / 86400e3) + ' d';
}

/** A lateness percentile: a histogram bucket's upper bound reads "≤ 1 h", a measured value "11 min". */
function lateness(v) {
  if (v == null) return '—';
  return (LATENESS_BUCKETS.has(v) ? '≤ ' : '') + duration(v);
}

/** How old an instance's report was when read: "just now" under 1.5 s, else "3 s ago". */
function ageText(ms) {
  if (ms == null) return '—';
  return ms < 1500 ? 'just now' : duration(ms, true) + ' ago';
}

/**
 * Text with a line-break opportunity after each separator (. _ : / @ # = , ;): ids, class names and keys wrap
 * between their parts, never inside one (the cells do not break words anywhere else); a hyphen joins ("order-42").
 */
function breakable(text) {
  const parts = String(text).split(/(?<=[._:/@#=,;])/);
  return parts.flatMap((part, i) => i === 0 ? [part] : [h('wbr'), part]);
}

function bytes(n) {
  if (n == null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? v : round(v)) + ' ' + units[i];
}

function notice(text, error) {
  const n = $('#notice');
  n.textContent = text;
  n.className = error ? 'error' : 'ok';
  n.hidden = false;
  clearTimeout(notice.timer);
  notice.timer = setTimeout(() => { n.hidden = true; }, error ? 8000 : 4000);
}

/** Asks a yes/no question in a modal dialog (keyboard: focus starts on Cancel, Tab to OK, Escape cancels). */
function ask(question, okLabel) {
  const dialog = $('#confirm');
  $('#confirm-text').textContent = question;
  $('#confirm-ok').textContent = okLabel || 'OK';
  return new Promise((resolve) => {
    const done = (answer) => {
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const onClose = () => done(false);
    dialog.addEventListener('close', onClose);
    $('#confirm-ok').onclick = () => done(true);
    $('#confirm-cancel').onclick = () => done(false);
    const before = document.activeElement;
    dialog.showModal();
    $('#confirm-cancel').focus();
    dialog.addEventListener('close', () => { if (before && before.isConnected) before.focus(); }, {once: true});
  });
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
  const response = await fetch(base + '/api/' + route, {method, headers, credentials: 'same-origin',
    body: method === 'POST' ? JSON.stringify(body || {}) : undefined});
  let data;
  try {
    data = await response.json();
  } catch (e) {
    data = {error: response.status + ' ' + response.statusText};
  }
  if (!response.ok) {
    if (response.status === 403) state.csrf = null; // a stale token: fetch a fresh one next time
    const error = new Error((data && data.error) || ('HTTP ' + response.status));
    error.status = response.status;
    throw error;
  }
  return data;
}

/** A GET whose route this server may not have (an older RMQ): null when it answers 404. */
async function optional(route) {
  try {
    return await api('GET', route);
  } catch (e) {
    if (e.status === 404) return null;
    throw e;
  }
}

function unavailable(what) {
  return h('p', {class: 'unavailable'}, what + ': not available on this server.');
}

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
  if (result.action === 'pause-cluster') return result.count ? 'paused everywhere' : 'was already paused everywhere';
  if (result.action === 'resume-cluster') return result.count ? 'resumed everywhere' : 'was not paused everywhere';
  if (typeof result.matched === 'number') {
    // acted on what matched when the server searched: messages may have changed since the confirmation
    return result.count + ' message' + (result.count === 1 ? '' : 's') + ' (' + result.matched + ' matched then)'
        + (result.more ? '; more match: run it again' : '');
  }
  if (result.action === 'run-now') return result.count + ' message' + (result.count === 1 ? '' : 's') + ' due now';
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

function button(label, cls, onclick, title) {
  return h('button', {type: 'button', class: cls, title, onclick}, label);
}

// ------------------------------------------------------------------ addresses

function topicAddress(topic, tab) {
  return '#/topics/' + enc(topic) + (tab && tab !== 'dead' ? '/' + tab : '');
}

function instanceAddress(id) {
  return '#/instances/' + enc(id);
}

/** The view the URL fragment names (anything else is the overview). */
function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '');
  try {
    if (parts[0] === 'topics' && parts[1]) {
      const tab = TABS.includes(parts[2]) ? parts[2] : 'dead';
      return {view: 'topic', topic: decodeURIComponent(parts[1]), tab};
    }
    if (parts[0] === 'instances' && parts[1]) {
      return {view: 'instance', instance: decodeURIComponent(parts[1])};
    }
  } catch (e) {
    // a malformed escape: the overview
  }
  return {view: 'overview'};
}

function route() {
  const previous = state.route;
  const next = parseRoute();
  state.route = next;
  const topicChanged = next.view === 'topic' && (previous.view !== 'topic' || previous.topic !== next.topic);
  if (topicChanged) {
    state.deadOffset = 0;
    state.retriesOffset = 0;
    state.inFlightOffset = 0;
    state.waitingCursors = [null];
    state.deadFilter = {error: '', prefix: ''};
    state.deadSelected.clear();
    state.retriesSelected.clear();
    $('#dead-error').value = '';
    $('#dead-prefix').value = '';
    $('#find-result').replaceChildren();
    $('#slots').replaceChildren();
    $('#history').replaceChildren();
    state.historyAt = 0;
  }
  for (const view of ['overview', 'topic', 'instance']) {
    $('#view-' + view).hidden = next.view !== view;
  }
  $('#topics-card').hidden = next.view === 'instance';
  $('#topics-title').textContent = next.view === 'topic' ? 'Topic figures' : 'Topics';
  $('#topics-hint').hidden = next.view === 'topic';
  renderCrumbs();
  if (next.view === 'topic') {
    $('#topic-name').textContent = next.topic;
    document.title = next.topic + ' · RMQ dashboard';
    document.querySelectorAll('.tab').forEach((b) => {
      const active = b.dataset.tab === next.tab;
      b.classList.toggle('active', active);
      if (active) b.setAttribute('aria-current', 'page'); else b.removeAttribute('aria-current');
    });
    document.querySelectorAll('.tab-pane').forEach((p) => { p.hidden = p.id !== 'tab-' + next.tab; });
  } else if (next.view === 'instance') {
    $('#instance-name').textContent = next.instance;
    document.title = 'Instance ' + next.instance + ' · RMQ dashboard';
  } else {
    document.title = 'RMQ dashboard';
  }
  // a keyboard user lands on the new view's heading, not on the link that led there
  if (previous.view !== next.view || topicChanged || previous.instance !== next.instance) {
    const heading = next.view === 'topic' ? $('#topic-heading') : next.view === 'instance'
        ? $('#instance-heading') : null;
    if (heading && document.activeElement && document.activeElement !== document.body) heading.focus();
  }
  refresh();
  // a tab of a topic this application does not define answers 400 or 404: the page says "no topic" instead
  if (next.view === 'topic') {
    loadTab().catch(async (e) => {
      if ((e.status === 400 || e.status === 404) && !(await loadTopic().catch(() => true))) return;
      notice(e.message, true);
    });
  }
}

function renderCrumbs() {
  const r = state.route;
  const parts = [h('a', {href: '#/'}, 'Overview')];
  if (r.view === 'topic') {
    parts.push(' › ', h('a', {href: topicAddress(r.topic), 'aria-current': r.tab === 'dead' ? 'page' : null},
        'Topic ' + r.topic));
    if (r.tab !== 'dead') parts.push(' › ', h('span', {'aria-current': 'page'}, r.tab.replace('-', ' ')));
  } else if (r.view === 'instance') {
    parts.push(' › ', h('span', {'aria-current': 'page'}, 'Instance ' + r.instance));
  }
  $('#crumbs').replaceChildren(...parts);
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
  return v == null ? '—' : round(v);
}

function renderTopics(overview) {
  const now = Date.now();
  const only = state.route.view === 'topic' ? state.route.topic : null;
  const rows = overview.topics.filter(({topic: t}) => only === null || t.name === only).map(({topic: t, meters: m}) => {
    const r = rate(t.name, m, now);
    const address = topicAddress(t.name);
    return h('tr', {'data-topic': t.name, class: 'clickable' + (t.name === only ? ' selected' : ''),
        onclick: (e) => { if (!e.target.closest('a')) location.hash = address; }},
      h('td', {class: 'name'}, h('a', {href: address}, t.name)),
      h('td', {}, h('span', {class: 'type'}, t.type)),
      h('td', {class: 'num'}, num(t.slots)),
      h('td', {class: 'mode'}, t.mode || '—'),
      h('td', {class: 'num waiting'}, num(t.waiting)),
      h('td', {class: 'num in-flight'}, num(t.inFlight)),
      h('td', {class: 'num retrying'}, num(t.retrying)),
      h('td', {class: 'num dead' + (t.dead > 0 ? ' alarm' : '')}, num(t.dead)),
      h('td', {class: 'oldest-due', title: t.oldestDue ? time(t.oldestDue) : null}, t.oldestDue
          ? relative(t.oldestDue) : '—'),
      h('td', {class: 'num sent-rate'}, overview.meters ? rateText(r.sent) : '—'),
      h('td', {class: 'num handled-rate'}, overview.meters ? rateText(r.handled) : '—'),
      h('td', {class: 'num lateness', title: m && m.latenessP99 != null ? 'p50 ' + m.latenessP50 + ' ms, p90 '
          + m.latenessP90 + ' ms, p99 ' + m.latenessP99 + ' ms' : null}, m && m.latenessP50 != null
          ? lateness(m.latenessP50) + ' / ' + lateness(m.latenessP90) + ' / ' + lateness(m.latenessP99) : '—'));
  });
  fill($('#topics tbody'), rows, 12, only !== null ? 'No topic ' + only + ' in this application.'
      : 'No topics yet: define one (rmq.topics.*) or add an @RmqListener.');
}

/** The cluster-wide pause of a listener or topic, or null (also while the pauses are unknown). */
function pauseOf(kind, name) {
  return (state.pauses || []).find((p) => p.kind === kind && p.name === name) || null;
}

/** A listener's cluster-wide pause: its own, or its whole topic's (from the pauses, else the listener's flag). */
function pausedEverywhere(l) {
  const badge = (p, text) => h('span', {class: 'badge paused', title: p ? 'since ' + time(p.since) + ' by ' + p.by
      : null}, text);
  if (state.pauses === null) return l.pausedCluster == null ? '—' : l.pausedCluster ? badge(null, 'paused') : 'no';
  const own = pauseOf('listener', l.id);
  const whole = pauseOf('topic', l.topic);
  if (!own && !whole) return 'no';
  return [own ? badge(own, 'paused') : null, own && whole ? ' ' : null, whole ? badge(whole, 'topic paused') : null];
}

/** Whether the listener's own cluster-wide pause is on, or null when unknown. */
function ownClusterPause(l) {
  if (state.pauses !== null) return !!pauseOf('listener', l.id);
  return l.pausedCluster == null ? null : l.pausedCluster;
}

/** Pause or resume a listener in every instance (its cluster-wide pause). */
function clusterButton(l) {
  const listener = l.id;
  const paused = ownClusterPause(l);
  if (readOnly || paused === null) return null;
  return paused
      ? button('Resume everywhere', 'resume-cluster', () => act('Resume ' + listener + ' everywhere', 'POST',
          'listeners/' + enc(listener) + '/resume-cluster'), 'Lift the cluster-wide pause: every instance resumes')
      : button('Pause everywhere', 'pause-cluster', () => ask('Pause ' + listener + ' in every instance?',
          'Pause everywhere').then((ok) => ok && act('Pause ' + listener + ' everywhere', 'POST',
          'listeners/' + enc(listener) + '/pause-cluster')), 'Every instance stops taking messages for it');
}

function renderListeners(listeners) {
  const rows = listeners.map((l) => h('tr', {'data-listener': l.id},
    h('td', {class: 'name'}, l.id),
    h('td', {}, h('a', {href: topicAddress(l.topic)}, l.topic)),
    h('td', {}, l.mode),
    h('td', {}, h('span', {class: 'state badge ' + l.state}, l.state)),
    h('td', {class: 'everywhere'}, pausedEverywhere(l)),
    h('td', {class: 'num'}, num(l.concurrency)),
    h('td', {class: 'owned'}, l.mode === 'ORDERLY' ? slotChips(l.ownedSlots, l.suspendedSlots) : '—'),
    h('td', {class: 'num' + (l.watchdogRepairs > 0 ? ' alarm' : '')}, num(l.watchdogRepairs)),
    h('td', {class: 'actions'}, readOnly || l.state === 'stopped' ? null : [(l.pausedHere != null ? l.pausedHere
        : l.state === 'paused')
        ? button('Resume here', 'resume', () => act('Resume ' + l.id + ' here', 'POST',
            'listeners/' + enc(l.id) + '/resume'), 'Resume in the instance serving this page')
        : button('Pause here', 'pause', () => act('Pause ' + l.id + ' here', 'POST',
            'listeners/' + enc(l.id) + '/pause'), 'Pause in the instance serving this page only'),
      clusterButton(l)])));
  fill($('#listeners tbody'), rows, 9, 'No listeners in this application.');
}

/** Most owned slots drawn as one chip each; more are written as ranges. */
const SLOT_CHIPS = 16;

/** Runs of slots that follow each other by {@code step}: [[first, last], …]. */
function slotRuns(sorted, step) {
  const runs = [];
  for (const slot of sorted) {
    const last = runs[runs.length - 1];
    if (last && slot === last[1] + step) last[1] = slot; else runs.push([slot, slot]);
  }
  return runs;
}

/** Slots as ranges: "0–63", "0–126 (even)", "1, 5, 9–12"; null when that takes more than 12 parts. */
function slotRanges(slots) {
  const sorted = [...slots].sort((a, b) => a - b);
  let runs = slotRuns(sorted, 1);
  let tag = '';
  const parity = sorted[0] % 2;
  if (sorted.length > 2 && sorted.every((slot) => slot % 2 === parity)) {
    const byTwo = slotRuns(sorted, 2);
    if (byTwo.length < runs.length) {
      runs = byTwo;
      tag = parity === 0 ? ' (even)' : ' (odd)';
    }
  }
  if (runs.length > 12) return null;
  return runs.map(([a, b]) => a === b ? String(a) : a + '–' + b + tag).join(', ');
}

function slotChips(owned, suspended) {
  if (!owned || !owned.length) return 'none';
  const held = new Set(suspended || []);
  if (owned.length <= SLOT_CHIPS) {
    return owned.map((slot) => h('span', {class: 'slot-chip' + (held.has(slot) ? ' suspended' : ''),
        title: held.has(slot) ? 'suspended until its head\'s retry' : 'owned'}, slot));
  }
  // many slots: ranges (or a count), every slot in the tooltip; suspended ones still drawn one by one
  const ranges = slotRanges(owned);
  const all = [...owned].sort((a, b) => a - b).join(', ');
  const parts = [h('span', {class: 'slot-ranges', title: 'owned: ' + all},
      owned.length + ' slots' + (ranges ? ': ' + ranges : ''))];
  const stuck = [...held].filter((slot) => owned.includes(slot)).sort((a, b) => a - b);
  if (stuck.length) {
    parts.push(' · suspended: ', stuck.map((slot) => h('span', {class: 'slot-chip suspended',
        title: 'suspended until its head\'s retry'}, slot)));
  }
  return parts;
}

function renderSchedules(schedules) {
  const at = (t) => t ? new Date(t).toLocaleString() : '—';
  const rows = (schedules || []).map((sc) => h('tr', {'data-schedule': sc.name},
    h('td', {class: 'name'}, sc.name),
    h('td', {}, sc.definition),
    h('td', {}, h('span', {class: 'state badge ' + (sc.paused ? 'paused' : 'running')},
        sc.conflict ? 'conflict' : sc.paused ? 'paused' : 'running')),
    h('td', {}, at(sc.nextFiring)),
    h('td', {}, at(sc.lastFiring)),
    h('td', {class: sc.outcome === 'failure' ? 'alarm' : '', title: sc.error || ''},
        sc.outcome ? sc.outcome + ' at ' + at(sc.outcomeAt) + (sc.error ? ': ' + sc.error : '') : '—'),
    h('td', {class: 'actions'}, readOnly ? null : sc.paused
        ? button('Resume', 'resume', () => act('Resume schedule ' + sc.name, 'POST',
            'schedules/' + enc(sc.name) + '/resume'))
        : button('Pause', 'pause', () => act('Pause schedule ' + sc.name, 'POST',
            'schedules/' + enc(sc.name) + '/pause')))));
  fill($('#schedules tbody'), rows, 7, 'No schedules in this application.');
}

function renderInstances(instances) {
  const card = $('#instances-card');
  card.querySelector('.unavailable')?.remove();
  $('#instances').hidden = instances === null;
  if (instances === null) {
    card.append(unavailable('The list of instances'));
    return;
  }
  const rows = instances.map((i) => h('tr', {'data-instance': i.id, class: 'clickable',
      onclick: (e) => { if (!e.target.closest('a')) location.hash = instanceAddress(i.id); }},
    h('td', {class: 'name'}, h('a', {href: instanceAddress(i.id)}, i.id)),
    h('td', {}, i.application || '—'),
    h('td', {}, i.host || '—'),
    h('td', {class: 'num'}, i.pid == null ? '—' : String(i.pid)),
    h('td', {}, i.version || '—'),
    h('td', {class: 'time'}, when(i.startedAt)),
    h('td', {class: 'time report-age', title: 'its latest report, ' + time(i.lastSeenAt)},
        i.reportAgeMillis != null ? ageText(i.reportAgeMillis) : relative(i.lastSeenAt) || '—'),
    h('td', {class: 'num busy'}, num(i.busy)),
    h('td', {class: 'num'}, num((i.listeners || []).length)),
    h('td', {class: 'num'}, num((i.ownedSlots || []).length))));
  fill($('#instances tbody'), rows, 10, 'No instance has registered.');
}

function renderPauses(pauses) {
  const card = $('#pauses-card');
  card.querySelector('.unavailable')?.remove();
  $('#pauses').hidden = pauses === null;
  if (pauses === null) {
    card.append(unavailable('Cluster-wide pauses'));
    return;
  }
  const rows = pauses.map((p) => h('tr', {'data-pause': p.kind + ':' + p.name},
    h('td', {}, p.kind),
    h('td', {class: 'name'}, p.kind === 'topic' ? h('a', {href: topicAddress(p.name)}, p.name) : p.name),
    h('td', {class: 'time'}, when(p.since)),
    h('td', {}, p.by || '—'),
    h('td', {class: 'actions'}, readOnly ? null : button('Resume everywhere', 'resume-cluster',
        () => act('Resume ' + p.name + ' everywhere', 'POST', p.kind === 'topic'
            ? 'topics/' + enc(p.name) + '/resume' : 'listeners/' + enc(p.name) + '/resume-cluster')))));
  fill($('#pauses tbody'), rows, 5, 'Nothing is paused cluster-wide.');
}

function renderRedis(redis) {
  const card = $('#redis-card');
  card.querySelector('.unavailable')?.remove();
  if (redis === null) {
    $('#redis').replaceChildren();
    $('#redis-nodes').hidden = true;
    card.append(unavailable('Redis figures'));
    return;
  }
  const facts = [
    ['Version', redis.version], ['Mode', redis.mode], ['Memory used', bytes(redis.usedMemory)],
    ['Memory peak', bytes(redis.peakMemory)], ['Clients', num(redis.clients)],
    ['RMQ keys', (redis.rmqKeysCapped ? '≥ ' : '') + num(redis.rmqKeys)],
  ];
  $('#redis').replaceChildren(...facts.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v == null ? '—' : v))));
  const nodes = redis.nodes || [];
  $('#redis-nodes').hidden = nodes.length === 0;
  fill($('#redis-nodes tbody'), nodes.map((n) => h('tr', {},
    h('td', {}, h('code', {}, n.id)), h('td', {}, n.address), h('td', {}, n.role), h('td', {}, n.slots || '—'),
    h('td', {class: n.state && !/^(ok|connected|online)$/i.test(n.state) ? 'alarm' : ''}, n.state))), 5, '');
}

// ------------------------------------------------------------------ one topic

function renderSlots(topic) {
  const slots = topic.perSlot || [];
  const parts = ['waiting', 'inFlight', 'retrying', 'dead'];
  const total = (sl) => parts.reduce((sum, p) => sum + sl[p], 0);
  const max = Math.max(1, ...slots.map(total));
  const titleOf = (sl) => 'slot ' + sl.slot + ': ' + sl.waiting + ' waiting, ' + sl.inFlight + ' in flight, '
      + sl.retrying + ' retrying, ' + sl.dead + ' dead';
  const legend = h('div', {class: 'legend'}, 'Per slot (', h('i', {class: 'waiting'}), ' waiting · ',
      h('i', {class: 'inFlight'}), ' in flight · ', h('i', {class: 'retrying'}), ' retrying · ', h('i', {class: 'dead'}),
      ' dead)');
  if (slots.length > BAR_SLOTS) {
    // a heat grid: one cell per slot, darker for more messages, outlined red where some are dead
    // 32 cells a row, each row labelled with its first slot
    const cells = slots.flatMap((sl, i) => [i % 32 === 0 ? h('div', {class: 'row-label', 'aria-hidden': 'true'}, sl.slot)
        : null, h('div', {class: 'slot heat heat-' + Math.ceil(5 * total(sl) / max) + (sl.dead > 0 ? ' has-dead' : ''),
        'data-slot': sl.slot, title: titleOf(sl), role: 'img', 'aria-label': titleOf(sl)})]);
    const dead = slots.filter((sl) => sl.dead > 0).map((sl) => sl.slot);
    $('#slots').replaceChildren(h('div', {class: 'legend'}, slots.length + ' slots, darker for more messages (at most '
        + num(max) + ' in one slot); outlined: has dead messages. Hover a cell for its figures.'),
      h('div', {class: 'heat-grid'}, cells),
      h('p', {class: 'hint'}, dead.length ? 'Slots with dead messages: ' + dead.join(', ') : 'No slot has dead messages.'));
    return;
  }
  const bars = slots.map((sl) => h('div', {class: 'slot', 'data-slot': sl.slot, title: titleOf(sl)},
    h('div', {class: 'bar'}, parts.map((p) => h('span', {class: p}))),
    h('div', {class: 'label'}, String(sl.slot)),
    h('div', {class: 'figures'}, parts.map((p) => sl[p]).join('·'))));
  // heights set through the CSSOM (allowed under the page's CSP, unlike style attributes)
  slots.forEach((sl, i) => {
    bars[i].querySelectorAll('.bar span').forEach((span, j) => {
      span.style.height = (100 * sl[parts[j]] / max) + '%';
    });
  });
  $('#slots').replaceChildren(legend, h('div', {class: 'slot-bars' + (slots.length > 16 ? ' many' : '')}, bars));
}

/** Shows or hides "no topic <name>" in place of a topic's page; true when the topic is known. */
function topicKnown(name, known) {
  $('#topic-unknown').hidden = known;
  $('#topic-unknown').textContent = known ? '' : 'No topic ' + name + ' here: this application does not define it.';
  for (const id of ['#slots', '#history-card', '#topic-messages']) $(id).hidden = !known;
  if (!known) {
    $('#topic-name').textContent = name;
    for (const id of ['#topic-paused', '#topic-pause', '#topic-resume']) $(id).hidden = true;
  }
  return known;
}

async function loadTopic() {
  const name = state.route.topic;
  let topic;
  try {
    topic = await api('GET', 'topics/' + enc(name));
  } catch (e) {
    if (e.status !== 404) throw e;
    if (state.route.topic === name) topicKnown(name, false);
    return false;
  }
  if (state.route.topic !== name) return false;
  topicKnown(name, true);
  $('#topic-name').textContent = topic.name + ' — ' + topic.type + ', ' + topic.slots + ' slot'
      + (topic.slots === 1 ? '' : 's') + (topic.mode ? ', ' + topic.mode : '');
  $('#waiting-score').textContent = topic.type === 'PRIORITY' ? 'Priority' : 'Due';
  renderSlots(topic);
  const paused = pauseOf('topic', name);
  $('#topic-paused').hidden = !paused;
  $('#topic-paused').title = paused ? 'since ' + time(paused.since) + ' by ' + paused.by : '';
  $('#topic-pause').hidden = state.pauses === null || !!paused;
  $('#topic-resume').hidden = state.pauses === null || !paused;
  return true;
}

// ------------------------------------------------------------------ history charts

const SERIES = [['sent', 'Sent'], ['handled', 'Handled'], ['failed', 'Failed'], ['dead', 'Dead']];

function hhmm(iso) {
  return new Date(iso).toISOString().slice(11, 16);
}

/** One series as bars in an SVG (classes give the colours; no style attributes under the CSP). */
function chart(history, key, label) {
  const points = history.points || [];
  const W = 300, H = 110, left = 34, top = 8, bottom = 18, width = W - left - 4, height = H - top - bottom;
  const max = Math.max(1, ...points.map((p) => p[key] || 0));
  const sum = points.reduce((a, p) => a + (p[key] || 0), 0);
  const step = points.length ? width / points.length : width;
  const unit = history.resolution === 'hour' ? 'hour' : 'minute';
  const bars = points.map((p, i) => {
    const v = p[key] || 0;
    const hgt = v === 0 ? 0 : Math.max(1, height * v / max);
    return s('rect', {class: 'col ' + key, x: (left + i * step + 0.5).toFixed(2), y: (top + height - hgt).toFixed(2),
      width: Math.max(0.5, step - 1).toFixed(2), height: hgt.toFixed(2)},
      s('title', {}, hhmm(p.at) + ' UTC: ' + num(v) + ' ' + label.toLowerCase()));
  });
  const span = history.resolution === 'hour' ? 'the last day' : 'the last hour';
  const svg = s('svg', {class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: '100%', role: 'img',
      'aria-label': label + ': ' + num(sum) + ' in ' + span + ', at most ' + num(max) + ' per ' + unit},
    s('line', {class: 'axis', x1: left, y1: top + height + 0.5, x2: W - 4, y2: top + height + 0.5}),
    s('line', {class: 'grid', x1: left, y1: top + 0.5, x2: W - 4, y2: top + 0.5}),
    s('text', {class: 'tick', x: left - 4, y: top + 4, 'text-anchor': 'end'}, num(max)),
    s('text', {class: 'tick', x: left - 4, y: top + height, 'text-anchor': 'end'}, '0'),
    points.length ? s('text', {class: 'tick', x: left, y: H - 5}, hhmm(points[0].at)) : null,
    points.length ? s('text', {class: 'tick', x: W - 4, y: H - 5, 'text-anchor': 'end'},
        hhmm(points[points.length - 1].at) + ' UTC') : null,
    bars);
  return h('figure', {class: 'chart-box', 'data-series': key},
    h('figcaption', {}, h('i', {class: 'swatch ' + key}), label, h('span', {class: 'sum'}, num(sum) + ' in ' + span)),
    svg);
}

async function loadHistory(force) {
  const name = state.route.topic;
  if (!force && Date.now() - state.historyAt < HISTORY_MS) return;
  state.historyAt = Date.now();
  const history = await optional('topics/' + enc(name) + '/history?resolution=' + state.resolution);
  if (state.route.topic !== name) return;
  if (history === null) {
    $('#history').replaceChildren(unavailable('History'));
    return;
  }
  $('#history').replaceChildren(...SERIES.map(([key, label]) => chart(history, key, label)));
}

function setResolution(resolution) {
  state.resolution = resolution;
  document.querySelectorAll('[data-resolution]').forEach((b) =>
      b.setAttribute('aria-pressed', String(b.dataset.resolution === resolution)));
  loadHistory(true).catch((e) => notice(e.message, true));
}

// ------------------------------------------------------------------ message tables

function bodyCell(text) {
  if (text == null) return h('td', {class: 'body muted', title: 'bodies are shown with rmq.dashboard.show-bodies=true'},
      '—');
  const short = text.length > 80 ? text.slice(0, 80) + '…' : text;
  const full = h('pre', {class: 'body-full', hidden: true}, text);
  const cell = h('td', {class: 'body'}, h('code', {class: 'body-text'}, short));
  if (text.length > 80 || text.includes('\n')) {
    cell.append(' ', h('button', {type: 'button', class: 'link inspect', 'aria-expanded': 'false', onclick: (e) => {
      full.hidden = !full.hidden;
      e.target.textContent = full.hidden ? 'inspect' : 'hide';
      e.target.setAttribute('aria-expanded', String(!full.hidden));
    }}, 'inspect'));
  }
  cell.append(full);
  return cell;
}

function idCell(id) {
  return h('td', {class: 'id'}, id != null ? h('code', {class: 'id-text'}, breakable(id)) : '—');
}

function errorCell(error) {
  return h('td', {class: 'error'}, error ? h('code', {}, breakable(error)) : '—');
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

/** What names a dead message in requeue-selected and delete-selected: its handle, else its id. */
function selectedName(m) {
  if (m.handle != null) return {slot: m.slot, handle: m.handle};
  if (m.id != null) return {slot: m.slot, id: m.id};
  return {slot: m.slot, handle: m.bodyBase64}; // a message without an id is stored as its body
}

function pager(prefix, page) {
  // capped: a slot held more than one request examines, so the total counts those examined
  $('#' + prefix + '-range').textContent = page.messages.length
      ? (page.offset + 1) + '–' + (page.offset + page.messages.length) + ' of ' + (page.capped ? 'at least ' : '')
        + num(page.total) : 'none';
  $('#' + prefix + '-prev').disabled = page.offset === 0;
  $('#' + prefix + '-next').disabled = page.offset + page.messages.length >= page.total;
}

function updateSelection() {
  const n = state.deadSelected.size;
  $('#dead-selected').textContent = n ? n + ' selected' : '';
  $('#dead-requeue-selected').disabled = n === 0;
  $('#dead-delete-selected').disabled = n === 0;
  const boxes = [...document.querySelectorAll('#dead tbody input.select')];
  $('#dead-select-all').checked = boxes.length > 0 && boxes.every((b) => b.checked);
}

async function loadDead() {
  const topic = state.route.topic;
  const f = state.deadFilter;
  const page = await api('GET', 'topics/' + enc(topic) + '/dead?offset=' + state.deadOffset + '&limit=' + PAGE
      + (f.error ? '&error=' + enc(f.error) : '') + (f.prefix ? '&prefix=' + enc(f.prefix) : ''));
  if (state.route.topic !== topic) return;
  const rows = page.messages.map((m, i) => {
    const key = JSON.stringify(selectedName(m));
    return h('tr', {class: 'dead-row', 'data-slot': m.slot},
      readOnly ? null : h('td', {class: 'select'}, h('input', {type: 'checkbox', class: 'select',
        'aria-label': 'Select dead message ' + (page.offset + i + 1), checked: state.deadSelected.has(key),
        onchange: (e) => {
          if (e.target.checked) state.deadSelected.set(key, selectedName(m)); else state.deadSelected.delete(key);
          updateSelection();
        }})),
      h('td', {class: 'num'}, m.slot),
      idCell(m.id),
      bodyCell(m.body),
      headersCell(m.headers),
      errorCell(m.error),
      h('td', {class: 'num'}, m.attempts),
      h('td', {class: 'time'}, when(m.diedAt)),
      h('td', {class: 'actions'}, readOnly ? null : [
        button('Requeue', 'requeue', () => act('Requeue', 'POST', 'topics/' + enc(topic) + '/dead/requeue',
            deadName(m))),
        button('Delete', 'delete danger', () => ask('Delete this dead message for good?', 'Delete')
            .then((ok) => ok && act('Delete', 'POST', 'topics/' + enc(topic) + '/dead/delete', deadName(m))))]));
  });
  fill($('#dead tbody'), rows, readOnly ? 8 : 9, f.error || f.prefix ? 'No dead message matches.' : 'No dead messages.');
  pager('dead', page);
  updateSelection();
  // "everything matching this search": offered once a search has matches; the confirmation quotes this count
  state.deadMatches = f.error || f.prefix ? {total: page.total, capped: page.capped} : null;
  $('#dead-requeue-matching').disabled = !state.deadMatches || page.total === 0;
  $('#dead-delete-matching').disabled = !state.deadMatches || page.total === 0;
  await loadDeadGroups(topic);
}

/** The topic's dead messages by error class: each a button that searches for its class. */
async function loadDeadGroups(topic) {
  const groups = await optional('topics/' + enc(topic) + '/dead-groups');
  if (state.route.topic !== topic) return;
  const box = $('#dead-groups');
  if (groups === null || !groups.groups.length) {
    box.replaceChildren();
    return;
  }
  box.replaceChildren(h('span', {class: 'muted'}, 'By error' + (groups.capped ? ' (first ' + num(groups.scanned)
      + ' examined)' : '') + ':'), ...groups.groups.map((g) => h('button', {type: 'button', class: 'group chip',
    title: 'Search the dead messages whose error contains ' + (g.errorClass || '(no reason)'),
    'aria-pressed': String(state.deadFilter.error === g.errorClass && g.errorClass !== ''), onclick: () => {
      $('#dead-error').value = g.errorClass;
      $('#dead-search').click();
    }}, h('code', {}, g.errorClass || '(no reason)'), ' ', h('span', {class: 'count'}, num(g.count)))));
}

function updateRetrySelection() {
  const n = state.retriesSelected.size;
  $('#retries-selected').textContent = n ? n + ' selected' : '';
  $('#retries-run-now-selected').disabled = n === 0;
  $('#retries-delete-selected').disabled = n === 0;
  const boxes = [...document.querySelectorAll('#retries tbody input.select')];
  $('#retries-select-all').checked = boxes.length > 0 && boxes.every((b) => b.checked);
}

/** Run now or delete one waiting or retrying message (tab: 'retries' or 'waiting'), named by its handle. */
function messageActions(topic, tab, m, runNow) {
  const name = {messages: [selectedName(m)]};
  return h('td', {class: 'actions'},
    runNow ? button('Run now', 'run-now', () => act('Run now', 'POST', 'topics/' + enc(topic) + '/' + tab
        + '/run-now', name), 'Due at once (a retry keeps its attempt count)') : null,
    button('Delete', 'delete danger', () => ask('Delete this ' + (tab === 'retries' ? 'retrying' : 'waiting')
        + ' message for good?', 'Delete').then((ok) => ok && act('Delete', 'POST', 'topics/' + enc(topic) + '/'
        + tab + '/delete', name))));
}

async function loadRetries() {
  const topic = state.route.topic;
  const page = await optional('topics/' + enc(topic) + '/retries?offset=' + state.retriesOffset + '&limit=' + PAGE);
  if (state.route.topic !== topic) return;
  const columns = readOnly ? 7 : 9;
  if (page === null) {
    fill($('#retries tbody'), [], columns, 'The list of retries is not available on this server.');
    return;
  }
  const rows = page.messages.map((m, i) => h('tr', {class: 'retry-row', 'data-slot': m.slot},
    readOnly ? null : h('td', {class: 'select'}, h('input', {type: 'checkbox', class: 'select',
      'aria-label': 'Select retry ' + (page.offset + i + 1),
      checked: state.retriesSelected.has(JSON.stringify(selectedName(m))), onchange: (e) => {
        const key = JSON.stringify(selectedName(m));
        if (e.target.checked) state.retriesSelected.set(key, selectedName(m)); else state.retriesSelected.delete(key);
        updateRetrySelection();
      }})),
    h('td', {class: 'num'}, m.slot),
    idCell(m.id),
    bodyCell(m.body),
    h('td', {class: 'num'}, num(m.attempt)),
    h('td', {class: 'time'}, when(m.nextAttemptAt)),
    errorCell(m.lastError),
    h('td', {class: 'time'}, when(m.failedAt)),
    readOnly ? null : messageActions(topic, 'retries', m, true)));
  fill($('#retries tbody'), rows, columns, 'Nothing waits for a retry.');
  pager('retries', page);
  if (!readOnly) updateRetrySelection();
}

/** A message in flight: on a topic's page with its instance, on an instance's page with its topic (when known). */
const HELD_AS = {handler: 'in a handler', prefetched: 'prefetched', owner: 'its slot\'s owner'};

/** Bytes of a base64 handle (the stored member), for a message the page may not show. */
function handleBytes(handle) {
  if (!handle) return null;
  return Math.floor(handle.length * 3 / 4) - (handle.endsWith('==') ? 2 : handle.endsWith('=') ? 1 : 0);
}

/**
 * A message in flight. The instance that holds it comes from the instances' own reports (each at most one heartbeat
 * old, its age shown): a handler works on it, it waits prefetched in that instance's buffer, or it is an ORDERLY slot's
 * owner's; "since" is its handler's start, so only a handler's message has one.
 */
function inFlightRow(m, onInstancePage, withTopic) {
  const nameless = m.id == null && m.body == null;
  const held = m.heldAs ? HELD_AS[m.heldAs] || m.heldAs : null;
  const reported = m.reportAgeMillis != null ? ', reported ' + ageText(m.reportAgeMillis) : '';
  return h('tr', {class: 'in-flight-row', 'data-slot': m.slot},
    withTopic ? h('td', {}, h('a', {href: topicAddress(m.topic, 'in-flight')}, m.topic)) : null,
    h('td', {class: 'num'}, m.slot),
    nameless ? h('td', {class: 'id muted', title: 'sent without an id: its body is its id'}, 'no id') : idCell(m.id),
    nameless ? h('td', {class: 'body muted', title: 'bodies are shown with rmq.dashboard.show-bodies=true; the Find'
        + ' tab finds a message by its body'}, 'hidden, ' + bytes(handleBytes(m.handle))) : bodyCell(m.body),
    h('td', {class: 'time'}, m.since ? when(m.since) : m.heldAs === 'prefetched'
        ? h('span', {class: 'muted'}, 'waiting for a handler') : '—'),
    h('td', {class: 'time'}, when(m.leaseDeadline)),
    onInstancePage ? null : h('td', {class: 'instance'}, m.instance
        ? [h('a', {href: instanceAddress(m.instance)}, breakable(m.instance)),
          h('span', {class: 'rel held-as'}, held + reported)]
        : h('span', {class: 'muted', title: 'no instance\'s latest report names it: fetched since (each instance'
            + ' reports every heartbeat), or its holder stopped; its lease deadline says when it goes back'},
            'not reported yet')),
    onInstancePage ? h('td', {class: 'held-as'}, held || '—') : null,
    h('td', {class: 'num'}, num(m.attempt)));
}

async function loadInFlight() {
  const topic = state.route.topic;
  const page = await optional('topics/' + enc(topic) + '/in-flight?offset=' + state.inFlightOffset + '&limit=' + PAGE);
  if (state.route.topic !== topic) return;
  if (page === null) {
    fill($('#in-flight tbody'), [], 7, 'The list of messages in flight is not available on this server.');
    return;
  }
  fill($('#in-flight tbody'), page.messages.map((m) => inFlightRow(m, false, false)), 7, 'Nothing in flight.');
  pager('in-flight', page);
}

async function loadWaiting() {
  const topic = state.route.topic;
  const cursor = state.waitingCursors[state.waitingCursors.length - 1];
  const page = await api('GET', 'topics/' + enc(topic) + '/waiting?limit=' + PAGE
      + (cursor ? '&cursor=' + enc(cursor) : ''));
  if (state.route.topic !== topic) return;
  const first = (state.waitingCursors.length - 1) * PAGE;
  const rows = page.messages.map((m, i) => h('tr', {class: 'waiting-row'},
    h('td', {class: 'num'}, first + i + 1),
    h('td', {class: 'num'}, m.slot),
    idCell(m.id),
    bodyCell(m.body),
    headersCell(m.headers),
    h('td', {class: m.priority != null ? 'num' : 'time'}, m.priority != null ? num(m.priority) : when(m.dueAt)),
    h('td', {class: 'num'}, m.failedAttempts),
    // PRIORITY: a waiting message is due already, its turn is its priority (Find reschedules it to another)
    readOnly || m.handle == null ? null : messageActions(topic, 'waiting', m, m.priority == null)));
  fill($('#waiting tbody'), rows, readOnly ? 7 : 8, 'Nothing waiting.');
  $('#waiting-range').textContent = page.messages.length
      ? (first + 1) + '–' + (first + page.messages.length) : 'end';
  $('#waiting-first').disabled = state.waitingCursors.length === 1;
  $('#waiting-next').disabled = !page.next;
  $('#waiting-next').dataset.next = page.next || '';
}

async function loadTab() {
  if (state.route.view !== 'topic') return;
  const tab = state.route.tab;
  if (tab === 'dead') await loadDead();
  if (tab === 'retries') await loadRetries();
  if (tab === 'in-flight') await loadInFlight();
  if (tab === 'waiting') await loadWaiting();
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

// ------------------------------------------------------------------ one instance

async function loadInstance() {
  const id = state.route.instance;
  let instance;
  try {
    instance = await api('GET', 'instances/' + enc(id));
  } catch (e) {
    if (e.status !== 404) throw e;
    instance = null;
  }
  if (state.route.instance !== id) return;
  $('#instance-unknown').hidden = instance !== null;
  $('#instance-details').hidden = instance === null;
  if (instance === null) {
    $('#instance-facts').replaceChildren();
    return;
  }
  const age = instance.reportAgeMillis != null ? ageText(instance.reportAgeMillis) : relative(instance.lastSeenAt);
  const facts = [
    ['Application', instance.application], ['Host', instance.host], ['Pid', instance.pid],
    ['RMQ version', instance.version], ['Started', when(instance.startedAt)],
    ['Reported', age || '—'], ['Busy handler threads', num(instance.busy)],
    ['Prefetched', instance.prefetched != null ? num(instance.prefetched) : null],
  ];
  $('#instance-as-of').textContent = 'As this instance reported ' + (age || '') + ' (' + time(instance.lastSeenAt)
      + '): its listeners, busy threads, owned slots and what it holds. It reports every heartbeat, and at once'
      + ' when one of its listeners pauses or resumes.';
  $('#instance-facts').replaceChildren(...facts.map(([k, v]) => h('div', {}, h('dt', {}, k),
      h('dd', {}, v == null ? '—' : v))));
  const rows = (instance.listeners || []).map((l) => h('tr', {'data-listener': l.id},
    h('td', {class: 'name'}, l.id),
    h('td', {}, h('a', {href: topicAddress(l.topic)}, l.topic)),
    h('td', {}, l.mode),
    h('td', {}, h('span', {class: 'state badge ' + l.state}, l.state)),
    h('td', {class: 'num'}, num(l.concurrency)),
    h('td', {class: 'num'}, num(l.busy)),
    h('td', {class: 'paused-here'}, l.pausedHere ? h('span', {class: 'badge paused'}, 'paused here') : 'no'),
    h('td', {class: 'paused-cluster'}, l.pausedCluster ? h('span', {class: 'badge paused'}, 'paused everywhere')
        : 'no'),
    // the listener's own cluster-wide pause decides the button: a topic's pause is lifted on the topic's page
    h('td', {class: 'actions'}, clusterButton(l))));
  fill($('#instance-listeners tbody'), rows, 9, 'No listeners in this instance.');
  const byTopic = new Map();
  for (const o of instance.ownedSlots || []) {
    if (!byTopic.has(o.topic)) byTopic.set(o.topic, []);
    byTopic.get(o.topic).push(o.slot);
  }
  $('#instance-slots').replaceChildren(...(byTopic.size ? [...byTopic].map(([topic, slots]) => h('p', {class: 'owned'},
      h('a', {href: topicAddress(topic)}, topic), ': ', slotChips(slots.sort((a, b) => a - b), [])))
      : [h('p', {class: 'hint'}, 'This instance owns no ORDERLY slot.')]));
  // the topic column only where the rows name their topic
  const inFlight = instance.inFlight || [];
  const withTopic = inFlight.some((m) => m.topic != null);
  $('#instance-in-flight thead th:first-child').hidden = !withTopic;
  $('#instance-in-flight-as-of').textContent = 'What it reported holding ' + (age || '')
      + ' (in a handler, or prefetched and waiting for one) that is still in flight now; a message fetched since'
      + ' then is listed with its next report.';
  fill($('#instance-in-flight tbody'), inFlight.map((m) => inFlightRow(m, true, withTopic)), withTopic ? 8 : 7,
      'Nothing in flight in this instance' + (age ? ' (as of its report ' + age + ')' : '') + '.');
}

// ------------------------------------------------------------------ refresh loop

let refreshing = false;

let refreshAgain = false;

async function refresh() {
  if (refreshing) {
    refreshAgain = true; // the view changed while reading: read again once this read is over
    return;
  }
  refreshing = true;
  const r = state.route;
  try {
    const readRedis = r.view === 'overview' && state.refreshes++ % REDIS_EVERY === 0;
    const [overview, instances, pauses, redis] = await Promise.all([
      api('GET', 'overview'),
      r.view === 'overview' ? optional('instances') : undefined,
      optional('pauses'),
      readRedis ? optional('redis') : undefined,
    ]);
    state.pauses = pauses;
    renderTopics(overview);
    if (r.view === 'overview') {
      renderListeners(overview.listeners);
      renderSchedules(overview.schedules);
      renderInstances(instances);
      renderPauses(pauses);
      if (readRedis) renderRedis(redis);
    }
    if (r.view === 'topic' && await loadTopic()) await loadHistory(false);
    if (r.view === 'instance') await loadInstance();
    $('#updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    $('#updated').classList.remove('stale');
  } catch (e) {
    $('#updated').textContent = 'not updated: ' + e.message;
    $('#updated').classList.add('stale');
  } finally {
    refreshing = false;
    if (refreshAgain) {
      refreshAgain = false;
      refresh();
    }
  }
}

function page(offsetKey, delta, load) {
  return () => {
    state[offsetKey] = Math.max(0, state[offsetKey] + delta);
    load().catch((e) => notice(e.message, true));
  };
}

function init() {
  $('#mode').textContent = readOnly ? 'read-only' : 'read-write';
  $('#mode').classList.add(readOnly ? 'read-only' : 'read-write');
  $('#footer-mode').textContent = readOnly
      ? 'Read-only: set rmq.dashboard.read-only=false to requeue, delete, cancel, reschedule, pause and resume.' : '';
  document.body.classList.toggle('read-only', readOnly);
  $('#refresh').addEventListener('click', () => {
    state.historyAt = 0;
    state.refreshes = 0;
    refresh();
    loadTab().catch(() => {});
  });
  document.querySelectorAll('.tab').forEach((b) => b.addEventListener('click', () => {
    location.hash = topicAddress(state.route.topic, b.dataset.tab);
  }));
  document.querySelectorAll('[data-resolution]').forEach((b) => b.addEventListener('click',
      () => setResolution(b.dataset.resolution)));
  $('#dead-prev').addEventListener('click', page('deadOffset', -PAGE, loadDead));
  $('#dead-next').addEventListener('click', page('deadOffset', PAGE, loadDead));
  $('#retries-prev').addEventListener('click', page('retriesOffset', -PAGE, loadRetries));
  $('#retries-next').addEventListener('click', page('retriesOffset', PAGE, loadRetries));
  $('#in-flight-prev').addEventListener('click', page('inFlightOffset', -PAGE, loadInFlight));
  $('#in-flight-next').addEventListener('click', page('inFlightOffset', PAGE, loadInFlight));
  const search = () => {
    state.deadFilter = {error: $('#dead-error').value.trim(), prefix: $('#dead-prefix').value};
    state.deadOffset = 0;
    state.deadSelected.clear();
    loadDead().catch((e) => notice('Search failed: ' + e.message, true));
  };
  $('#dead-search').addEventListener('click', search);
  for (const input of ['#dead-error', '#dead-prefix']) {
    $(input).addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); search(); } });
  }
  $('#dead-clear').addEventListener('click', () => {
    $('#dead-error').value = '';
    $('#dead-prefix').value = '';
    search();
  });
  $('#dead-select-all').addEventListener('change', (e) => {
    // read once: each box's click updates the selection, which sets this box back until every row is checked
    const wanted = e.target.checked;
    document.querySelectorAll('#dead tbody input.select').forEach((box) => {
      if (box.checked !== wanted) box.click();
    });
    e.target.checked = wanted;
  });
  const bulk = (action, label) => () => {
    const messages = [...state.deadSelected.values()];
    const topic = state.route.topic;
    ask(label + ' ' + messages.length + ' selected dead message' + (messages.length === 1 ? '' : 's') + ' of '
        + topic + '?', label).then((ok) => ok && act(label + ' selected', 'POST', 'topics/' + enc(topic) + '/dead/'
        + action, {messages}, () => { state.deadSelected.clear(); }));
  };
  $('#dead-requeue-selected').addEventListener('click', bulk('requeue-selected', 'Requeue'));
  $('#dead-delete-selected').addEventListener('click', bulk('delete-selected', 'Delete'));
  const matching = (action, label, danger) => () => {
    const f = state.deadFilter;
    const m = state.deadMatches;
    if (!m) return;
    const what = [f.error ? 'whose error contains "' + f.error + '"' : null,
      f.prefix ? 'whose id or body starts with "' + f.prefix + '"' : null].filter(Boolean).join(' and ');
    ask(label + ' the ' + (m.capped ? 'at least ' : '') + num(m.total) + ' dead message' + (m.total === 1 ? '' : 's')
        + ' of ' + state.route.topic + ' ' + what + (danger ? ' for good' : '') + '? (At most 1,000 per request;'
        + ' the answer says how many were ' + (danger ? 'deleted' : 'requeued') + '.)', label + ' ' + num(m.total))
        .then((ok) => ok && act(label + ' matching', 'POST', 'topics/' + enc(state.route.topic) + '/dead/' + action,
            {error: f.error, prefix: f.prefix}, () => { state.deadSelected.clear(); }));
  };
  $('#dead-requeue-matching').addEventListener('click', matching('requeue-matching', 'Requeue', false));
  $('#dead-delete-matching').addEventListener('click', matching('delete-matching', 'Delete', true));
  $('#retries-select-all').addEventListener('change', (e) => {
    const wanted = e.target.checked;
    document.querySelectorAll('#retries tbody input.select').forEach((box) => {
      if (box.checked !== wanted) box.click();
    });
    e.target.checked = wanted;
  });
  const retryBulk = (action, label, question) => () => {
    const messages = [...state.retriesSelected.values()];
    const topic = state.route.topic;
    const n = messages.length + ' selected retr' + (messages.length === 1 ? 'y' : 'ies');
    const go = () => act(label + ' selected', 'POST', 'topics/' + enc(topic) + '/retries/' + action, {messages},
        () => { state.retriesSelected.clear(); });
    if (question) ask(question + ' ' + n + ' of ' + topic + ' for good?', label).then((ok) => ok && go()); else go();
  };
  $('#retries-run-now-selected').addEventListener('click', retryBulk('run-now', 'Run now', null));
  $('#retries-delete-selected').addEventListener('click', retryBulk('delete', 'Delete', 'Delete'));
  $('#dead-requeue-all').addEventListener('click', () => ask('Requeue every dead message of ' + state.route.topic
      + '?', 'Requeue all').then((ok) => ok && act('Requeue all', 'POST', 'topics/' + enc(state.route.topic)
      + '/dead/requeue-all')));
  $('#dead-purge').addEventListener('click', () => ask('Delete every dead message of ' + state.route.topic
      + ' for good?', 'Purge').then((ok) => ok && act('Purge', 'POST', 'topics/' + enc(state.route.topic)
      + '/dead/purge')));
  $('#topic-pause').addEventListener('click', () => ask('Pause topic ' + state.route.topic
      + ' in every instance (no listener takes its messages until resumed)?', 'Pause everywhere')
      .then((ok) => ok && act('Pause ' + state.route.topic + ' everywhere', 'POST', 'topics/'
      + enc(state.route.topic) + '/pause')));
  $('#topic-resume').addEventListener('click', () => act('Resume ' + state.route.topic + ' everywhere', 'POST',
      'topics/' + enc(state.route.topic) + '/resume'));
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
    api('GET', 'topics/' + enc(state.route.topic) + '/find?' + findBy() + '=' + enc($('#find-body').value))
        .then(renderFind).catch((err) => notice('Find failed: ' + err.message, true));
  });
  $('#cancel').addEventListener('click', () => act('Cancel', 'POST', 'topics/' + enc(state.route.topic) + '/cancel',
      {[findBy()]: $('#find-body').value}));
  $('#reschedule').addEventListener('click', () => act('Reschedule', 'POST', 'topics/' + enc(state.route.topic)
      + '/reschedule', {[findBy()]: $('#find-body').value, when: $('#when').value}));
  if (!readOnly) {
    fetch(base + '/api/csrf', {credentials: 'same-origin'}).then((r) => r.json())
        .then((t) => { state.csrf = t; }).catch(() => {});
  }
  window.addEventListener('hashchange', route);
  route();
  setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
}

init();
