// The koord-queue web view: reads the visibility API and the objects the
// caller may read, on this page's own origin, and redraws every 2 seconds.
'use strict';

const GROUP_PATH = '/apis/visibility.koord-queue.x-k8s.io/v1alpha1';
// Whatever precedes the API paths (a proxy's prefix) is kept.
const PREFIX = location.pathname.slice(0, Math.max(0, location.pathname.indexOf(GROUP_PATH + '/ui')));
const VIS = PREFIX + GROUP_PATH;
const SCHED = PREFIX + '/apis/scheduling.x-k8s.io/v1alpha1';
const CORE = PREFIX + '/api/v1';
const QUEUE_NAMESPACE = 'koord-queue';
const QUOTA_LABEL = 'quota.scheduling.koordinator.sh/name';
const ADMITTED_PHASES = ['Reserved', 'Dequeued', 'Running'];
const REFRESH_MS = 2000;
const MAX_AHEAD = 10;

// h builds an element; text children are text nodes, never markup.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

class APIError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function getJSON(url) {
  const r = await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
  if (!r.ok) {
    let msg = r.status + ' ' + r.statusText;
    try { const st = await r.json(); if (st && st.message) msg = st.message; } catch (e) { /* not a Status */ }
    throw new APIError(r.status, msg);
  }
  return r.json();
}

// orNull answers null where the caller may not read or nothing is there.
async function orNull(p) {
  try { return await p; } catch (e) { if (e.status === 403 || e.status === 404) return null; throw e; }
}

const enc = encodeURIComponent;

// Quantities, as Kubernetes writes them.
const SUFFIX = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
function qty(s) {
  if (s === undefined || s === null || s === '') return 0;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(s));
  if (!m || !(m[2] in SUFFIX)) return NaN;
  return parseFloat(m[1]) * SUFFIX[m[2]];
}
// amount writes a number of a resource back as people read it: bytes in
// binary units, anything else with at most three decimals.
function amount(name, n) {
  if (/memory|storage/.test(name)) {
    for (const [u, f] of [['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]]) {
      if (n >= f) return +(n / f).toFixed(2) + u;
    }
  }
  return String(+n.toFixed(3));
}
function pct(part, whole) { return whole > 0 ? Math.max(0, Math.min(100, part / whole * 100)) : 0; }
function fmt(q) { return q === undefined || q === null || q === '' ? '-' : String(q); }
function resources(list) { return Object.entries(list || {}).map(([k, v]) => k + ' ' + v).join(', ') || '-'; }

function unitHref(ns, name) { return '#/units/' + enc(ns) + '/' + enc(name); }
function queueHref(name) { return '#/queues/' + enc(name); }
function unitLink(ns, name) { return h('a', { href: unitHref(ns, name), 'data-unit-link': ns + '/' + name }, ns + '/' + name); }

// bar draws used against max, with min as a tick and the part above min
// hatched as borrowed. With no max (the resource is not bounded), the bar is
// drawn against twice what is used or min, on a dashed track, so it never
// reads as full.
function bar(r) {
  const used = qty(r.used), min = qty(r.min), max = r.max === undefined ? null : qty(r.max);
  const scale = max !== null ? max : 2 * Math.max(used, min);
  const full = max !== null && used >= max && max > 0;
  const usedPct = max === 0 ? (used > 0 ? 100 : 0) : pct(used, scale);
  const b = h('div', { class: 'bar' + (full ? ' full' : '') + (max === null ? ' unbounded' : ''), 'data-used-percent': Math.round(usedPct), role: 'meter',
    'aria-valuenow': used, 'aria-valuemax': max === null ? undefined : max, 'aria-label': r.name });
  const u = h('div', { class: 'used' });
  u.style.width = usedPct + '%';
  b.append(u);
  if (qty(r.borrowed) > 0 && scale > 0) {
    const br = h('div', { class: 'borrowed', title: 'borrowed ' + r.borrowed });
    br.style.left = pct(min, scale) + '%';
    br.style.width = (usedPct - pct(min, scale)) + '%';
    b.append(br);
  }
  if (min > 0 && scale > 0) {
    const t = h('div', { class: 'min', title: 'min ' + r.min });
    t.style.left = 'calc(' + pct(min, scale) + '% - 1px)';
    b.append(t);
  }
  return b;
}

function resourceRow(r, short) {
  const text = fmt(r.used) + ' / ' + fmt(r.min) + ' / ' + (r.max === undefined ? 'no max' : fmt(r.max));
  return h('div', { class: 'res', 'data-resource': r.name },
    h('span', { class: 'name' }, r.name),
    bar(r),
    h('span', { class: 'text' }, text, ' ', h('span', { class: 'muted' }, '(used / min / max)'),
      qty(r.borrowed) > 0 ? h('span', { class: 'muted' }, ' borrowed ' + r.borrowed) : null,
      qty(r.lent) > 0 ? h('span', { class: 'muted' }, ' lent ' + r.lent) : null,
      short ? h('span', { class: 'short' }, ' short ' + short) : null));
}

function quotaCard(q, opts) {
  const borrowing = (q.resources || []).some(r => qty(r.borrowed) > 0);
  const lending = (q.resources || []).some(r => qty(r.lent) > 0);
  const full = (q.resources || []).some(r => r.max !== undefined && qty(r.used) >= qty(r.max) && qty(r.max) > 0);
  return h('div', { class: 'quota', 'data-quota': q.metadata.name },
    h('div', { class: 'title' },
      h('strong', {}, q.metadata.name),
      q.quotaNamespace ? h('span', { class: 'muted' }, 'namespace ' + q.quotaNamespace) : null,
      h('span', {}, q.pendingUnits + ' pending, ' + q.admittedUnits + ' admitted'),
      q.isParent ? null : h('a', { href: queueHref(q.metadata.name) }, 'queue'),
      borrowing ? h('span', { class: 'badge borrowing' }, 'borrowing') : null,
      lending ? h('span', { class: 'badge lending' }, 'lending') : null,
      full ? h('span', { class: 'badge full' }, 'full') : null),
    (q.resources || []).length === 0 ? h('div', { class: 'muted' }, 'no resources limited or used')
      : (q.resources || []).map(r => resourceRow(r, opts && opts.short ? opts.short[r.name] : null)));
}

// Pages. Each returns the nodes to show; the router swaps them in at once.
async function quotasPage() {
  const list = await getJSON(VIS + '/quotas');
  const items = list.items || [];
  if (items.length === 0) return [h('h1', {}, 'Quotas'), h('p', { class: 'muted' }, 'The scheduler has no quota tree (no ElasticQuotas, or the quota plugin is off).')];
  const names = new Set(items.map(q => q.metadata.name));
  const children = new Map();
  for (const q of items) {
    const p = q.parent && names.has(q.parent) ? q.parent : '';
    if (!children.has(p)) children.set(p, []);
    children.get(p).push(q);
  }
  const tree = (parent, root) => h('ul', { class: 'tree' + (root ? ' root' : '') },
    (children.get(parent) || []).map(q => h('li', {}, quotaCard(q), children.has(q.metadata.name) ? tree(q.metadata.name, false) : null)));
  return [h('h1', {}, 'Quotas'), h('p', { class: 'muted' }, 'Bars show used against max (green, red when full); the tick is min; hatching is what a quota borrows above its min.'), tree('', true)];
}

// queueNames: the Queue objects when the caller may list them, else the
// quotas that are leaves (each has a queue of its name).
async function queueObjects() {
  const qs = await orNull(getJSON(SCHED + '/namespaces/' + QUEUE_NAMESPACE + '/queues'));
  if (qs) return { known: true, items: qs.items || [] };
  const quotas = await getJSON(VIS + '/quotas');
  return { known: false, items: (quotas.items || []).filter(q => !q.isParent).map(q => ({ metadata: { name: q.metadata.name }, spec: {} })) };
}

async function countIn(name, phase) {
  const s = await orNull(getJSON(VIS + '/queues/' + enc(name) + '/queueunits?limit=1&phase=' + phase));
  return s ? s.total : null;
}

async function queuesPage() {
  const { known, items } = await queueObjects();
  items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const rows = await Promise.all(items.map(async q => {
    const name = q.metadata.name;
    const pending = await orNull(getJSON(VIS + '/queues/' + enc(name) + '/queueunits?limit=1'));
    const admitted = (await Promise.all(ADMITTED_PHASES.map(p => countIn(name, p)))).reduce((a, n) => a + (n || 0), 0);
    const head = pending && pending.items && pending.items[0];
    return h('tr', { 'data-queue': name },
      h('td', {}, h('a', { href: queueHref(name) }, name)),
      h('td', {}, known ? (q.spec.queuePolicy || 'Priority') : '-'),
      h('td', { class: 'num' }, known && q.spec.priority !== undefined ? q.spec.priority : '-'),
      h('td', { class: 'num', 'data-col': 'pending' }, pending ? pending.total : '-'),
      h('td', { class: 'num', 'data-col': 'admitted' }, admitted),
      h('td', {}, head ? unitLink(head.metadata.namespace, head.metadata.name) : h('span', { class: 'muted' }, 'none')),
      h('td', { class: 'message' }, head ? (head.message || 'no reason given yet') : ''));
  }));
  return [h('h1', {}, 'Queues'),
    known ? null : h('p', { class: 'muted' }, 'You may not read the Queue objects: policies and priorities are not shown.'),
    rows.length === 0 ? h('p', { class: 'muted' }, 'No queues.') :
      h('table', { id: 'queues' }, h('thead', {}, h('tr', {}, ['Queue', 'Policy', 'Priority', 'Pending', 'Admitted', 'Head', 'Why the head waits'].map(c => h('th', {}, c)))),
        h('tbody', {}, rows))];
}

async function queuePage(name) {
  const s = await getJSON(VIS + '/queues/' + enc(name) + '/queueunits');
  const admitted = [];
  for (const p of ADMITTED_PHASES) {
    const a = await orNull(getJSON(VIS + '/queues/' + enc(name) + '/queueunits?phase=' + p));
    if (a) admitted.push(...(a.items || []));
  }
  const q = await orNull(getJSON(SCHED + '/namespaces/' + QUEUE_NAMESPACE + '/queues/' + enc(name)));
  const items = s.items || [];
  const hidden = items.length > 0 ? items[items.length - 1].positionInQueue - items.length : 0;
  return [h('h1', {}, 'Queue ' + name),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Policy'), h('dd', {}, q ? (q.spec.queuePolicy || 'Priority') : '-'),
      h('dt', {}, 'Priority'), h('dd', {}, q && q.spec.priority !== undefined ? q.spec.priority : '-'),
      h('dt', {}, 'Pending'), h('dd', { 'data-col': 'pending' }, s.total),
      h('dt', {}, 'Admitted'), h('dd', { 'data-col': 'admitted' }, admitted.length)),
    h('h2', {}, 'Pending, in the order they are tried'),
    items.length === 0 ? h('p', { class: 'muted', id: 'pending-empty' }, 'No pending units you may see.') :
      h('table', { id: 'pending' }, h('thead', {}, h('tr', {}, ['#', 'Unit', 'Priority', 'Request', 'Why it waits'].map(c => h('th', {}, c)))),
        h('tbody', {}, items.map(u => h('tr', { 'data-unit': u.metadata.namespace + '/' + u.metadata.name },
          h('td', { class: 'num' }, u.positionInQueue), h('td', {}, unitLink(u.metadata.namespace, u.metadata.name)),
          h('td', { class: 'num' }, u.priority), h('td', {}, resources(u.request)), h('td', { class: 'message' }, u.message || ''))))),
    hidden > 0 ? h('p', { class: 'muted' }, hidden + ' more in namespaces you may not list.') : null,
    h('h2', {}, 'Admitted'),
    admitted.length === 0 ? h('p', { class: 'muted' }, 'None you may see.') :
      h('table', { id: 'admitted' }, h('thead', {}, h('tr', {}, ['Unit', 'Phase', 'Quota', 'Request'].map(c => h('th', {}, c)))),
        h('tbody', {}, admitted.map(u => h('tr', { 'data-unit': u.metadata.namespace + '/' + u.metadata.name },
          h('td', {}, unitLink(u.metadata.namespace, u.metadata.name)), h('td', {}, u.phase), h('td', {}, u.quota || ''), h('td', {}, resources(u.request))))))];
}

// quotaPath walks from a quota to the root, each with what the request is
// short of its max.
function quotaPath(quotas, name, request, pending) {
  const byName = new Map(quotas.map(q => [q.metadata.name, q]));
  const path = [];
  for (let q = byName.get(name); q && path.length < 64; q = q.parent ? byName.get(q.parent) : null) {
    const short = {};
    if (pending) {
      for (const r of q.resources || []) {
        const req = qty((request || {})[r.name]);
        if (req > 0 && r.max !== undefined) {
          const missing = qty(r.used) + req - qty(r.max);
          if (missing > 0) short[r.name] = amount(r.name, missing);
        }
      }
    }
    path.push(quotaCard(q, { short }));
  }
  return path;
}

async function unitPage(ns, name) {
  let u;
  try {
    u = await getJSON(SCHED + '/namespaces/' + enc(ns) + '/queueunits/' + enc(name));
  } catch (e) {
    if (e.status === 403) return [h('h1', {}, 'Unit ' + ns + '/' + name), h('p', { class: 'forbidden', id: 'forbidden' }, 'Forbidden: you may not read QueueUnit ' + ns + '/' + name + '. ' + e.message)];
    if (e.status === 404) return [h('h1', {}, 'Unit ' + ns + '/' + name), h('p', { class: 'error', id: 'not-found' }, 'QueueUnit ' + ns + '/' + name + ' does not exist.')];
    throw e;
  }
  const labels = u.metadata.labels || {};
  const queue = labels[QUOTA_LABEL] || u.spec.queue || '';
  const phase = (u.status && u.status.phase) || 'Enqueued';
  const pending = phase === 'Enqueued' || phase === '' || phase === 'TimeoutBackoff';
  const quota = (!pending && u.status && u.status.quota) || queue;
  const [inQueue, quotas, events] = await Promise.all([
    queue ? orNull(getJSON(VIS + '/queues/' + enc(queue) + '/queueunits')) : null,
    orNull(getJSON(VIS + '/quotas')),
    orNull(getJSON(CORE + '/namespaces/' + enc(ns) + '/events?fieldSelector=' + enc('involvedObject.name=' + name))),
  ]);
  const job = u.spec.consumerRef;
  const jobEvents = job && job.name !== name ? await orNull(getJSON(CORE + '/namespaces/' + enc(ns) + '/events?fieldSelector=' + enc('involvedObject.name=' + job.name))) : null;
  const items = (inQueue && inQueue.items) || [];
  const i = items.findIndex(it => it.metadata.namespace === ns && it.metadata.name === name);
  const me = i >= 0 ? items[i] : null;
  const ahead = i > 0 ? items.slice(0, i).reverse() : [];
  const hiddenAhead = me ? me.positionInQueue - 1 - ahead.length : 0;
  const next = i >= 0 && i + 1 < items.length ? items[i + 1] : null;
  const request = (me && me.request) || u.spec.request || u.spec.resource;
  const allEvents = [...((events && events.items) || []), ...((jobEvents && jobEvents.items) || [])]
    .sort((a, b) => String(b.lastTimestamp || b.eventTime || '').localeCompare(String(a.lastTimestamp || a.eventTime || '')));
  return [h('h1', {}, 'Unit ' + ns + '/' + name),
    h('dl', { class: 'facts', id: 'unit' },
      h('dt', {}, 'Phase'), h('dd', { 'data-col': 'phase' }, phase),
      h('dt', {}, 'Queue'), h('dd', {}, queue ? h('a', { href: queueHref(queue) }, queue) : '-'),
      h('dt', {}, 'Quota'), h('dd', {}, quota || '-'),
      h('dt', {}, 'Priority'), h('dd', {}, u.spec.priority !== undefined ? u.spec.priority : 0),
      h('dt', {}, 'Request'), h('dd', {}, resources(request)),
      h('dt', {}, 'Position'), h('dd', { 'data-col': 'position' }, me ? me.positionInQueue + ' of ' + (items.length ? items[items.length - 1].positionInQueue : '?') : (pending ? '-' : 'admitted')),
      h('dt', {}, 'Why'), h('dd', { class: 'message', 'data-col': 'why' }, (me && me.message) || (u.status && u.status.message) || (pending ? 'no reason given yet' : '-')),
      h('dt', {}, 'Job'), h('dd', {}, job ? (job.kind || '') + ' ' + (job.apiVersion ? '(' + job.apiVersion + ') ' : '') + (job.namespace || ns) + '/' + job.name : '-'),
      h('dt', {}, 'Next in queue'), h('dd', { 'data-col': 'next' }, next ? unitLink(next.metadata.namespace, next.metadata.name) : '-')),
    h('h2', {}, 'Quota path, from its own quota to the root'),
    quotas ? h('div', { id: 'quota-path' }, quotaPath(quotas.items || [], quota, request, pending)) : h('p', { class: 'muted' }, 'You may not read the quotas.'),
    h('h2', {}, 'Ahead in queue ' + (queue || '-')),
    ahead.length === 0 && hiddenAhead <= 0 ? h('p', { class: 'muted' }, pending ? 'Nothing ahead you may see.' : 'The unit does not wait.') :
      h('ol', { id: 'ahead' }, ahead.slice(0, MAX_AHEAD).map(a => h('li', {}, unitLink(a.metadata.namespace, a.metadata.name), ' at ' + a.positionInQueue + ' ', h('span', { class: 'muted' }, a.message || '')))),
    hiddenAhead > 0 ? h('p', { class: 'muted' }, hiddenAhead + ' more ahead in namespaces you may not list.') : null,
    h('h2', {}, 'Events'),
    events === null ? h('p', { class: 'muted' }, 'You may not read events in ' + ns + '.') :
      allEvents.length === 0 ? h('p', { class: 'muted' }, 'No events.') :
        h('table', { id: 'events' }, h('thead', {}, h('tr', {}, ['Last seen', 'Object', 'Type', 'Reason', 'Message'].map(c => h('th', {}, c)))),
          h('tbody', {}, allEvents.map(e => h('tr', {}, h('td', {}, e.lastTimestamp || e.eventTime || ''),
            h('td', {}, (e.involvedObject.kind || '') + '/' + e.involvedObject.name), h('td', {}, e.type || ''), h('td', {}, e.reason || ''), h('td', { class: 'message' }, e.message || '')))))];
}

// Routing by the hash: #/quotas, #/queues, #/queues/NAME, #/units/NS/NAME.
function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  switch (parts[0]) {
    case 'queues': return parts[1] ? { nav: 'queues', load: () => queuePage(parts[1]) } : { nav: 'queues', load: queuesPage };
    case 'units': return { nav: 'queues', load: () => unitPage(parts[1] || '', parts[2] || '') };
    default: return { nav: 'quotas', load: quotasPage };
  }
}

let timer = null;
let generation = 0;
async function refresh() {
  clearTimeout(timer);
  const mine = ++generation;
  const r = route();
  document.querySelectorAll('[data-nav]').forEach(a => a.classList.toggle('active', a.dataset.nav === r.nav));
  const status = document.getElementById('status');
  try {
    const nodes = await r.load();
    if (mine !== generation) return;
    document.getElementById('view').replaceChildren(...nodes.filter(Boolean));
    status.className = 'status';
    status.textContent = 'updated ' + new Date().toLocaleTimeString();
    document.body.dataset.loaded = String(mine);
  } catch (e) {
    if (mine !== generation) return;
    status.className = 'status error';
    status.textContent = e.status === 401 ? 'not signed in (open this page through kubectl proxy)' : String(e.message || e);
    if (!document.body.dataset.loaded) document.getElementById('view').replaceChildren(h('p', { class: 'error', id: 'error' }, String(e.message || e)));
  }
  if (mine === generation && !document.hidden) timer = setTimeout(refresh, REFRESH_MS);
}

window.addEventListener('hashchange', () => { delete document.body.dataset.loaded; refresh(); });
document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); else clearTimeout(timer); });
refresh();
