// buddi's dashboard: every view is read from the API (which projects the event log), and
// the live channel only says when to read again. All text goes in as text, never as HTML.

const port = location.port || (location.protocol === 'https:' ? '443' : '80');
const csrfCookie = 'buddi_csrf_' + port;

function cookie(name) {
  for (const part of document.cookie.split('; ')) {
    const i = part.indexOf('=');
    if (part.slice(0, i) === name) return decodeURIComponent(part.slice(i + 1));
  }
  return '';
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (method !== 'GET') {
    opts.headers['Content-Type'] = 'application/json';
    opts.headers['X-Buddi-CSRF'] = cookie(csrfCookie);
    opts.body = JSON.stringify(body || {});
  }
  const res = await fetch(path, opts);
  let data = {};
  try { data = await res.json(); } catch { /* no body */ }
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

// el builds an element: el('div', {class: 'x', onclick: f}, 'text', child…).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const main = document.getElementById('main');
const rail = document.getElementById('rail');
const status = document.getElementById('status');
let agents = [];
let current = { page: 'home', agent: '' };
let chat = null; // the chat page's state: {agent, conv, socket, streaming}

function say(text) { status.textContent = text; }

async function act(fn, doneText) {
  try { await fn(); if (doneText) say(doneText); } catch (e) { say(e.message); }
  refresh();
}

// --- the agent rail: a count for pending approvals, a dot for a held question ---
async function drawRail() {
  try { agents = (await api('GET', '/api/attention')).agents; } catch (e) { say(e.message); return; }
  rail.replaceChildren(...agents.map(a => el('a', {
    href: '#/chat/' + a.id, 'data-agent': a.id,
    class: [a.available ? '' : 'unavailable', current.agent === a.id ? 'current' : ''].join(' ').trim(),
    title: a.available ? a.name : a.problem,
  }, el('span', {}, a.handle), el('span', {},
    a.pending ? el('span', { class: 'count', title: a.pending + ' waiting for you' }, a.pending) : null,
    a.question ? el('span', { class: 'dot', title: 'a question is waiting for your answer' }) : null))));
}

// --- approval cards, shared by Home and Chat ---
function approvalCard(a, onDone) {
  const env = a.envelope || {};
  return el('div', { class: 'card approval', 'data-action': a.id },
    el('div', {}, el('strong', {}, env.summary || a.tool), ' ', el('span', { class: 'muted' }, a.agent + ' · ' + a.tool)),
    env.preview || a.card ? el('pre', {}, env.preview || a.card) : null,
    el('div', {},
      el('button', { class: 'primary', onclick: () => act(() => api('POST', `/api/approvals/${a.id}/approve`), 'Approved').then(onDone) }, 'Approve'), ' ',
      el('button', { class: 'danger', onclick: () => act(() => api('POST', `/api/approvals/${a.id}/reject`), 'Rejected').then(onDone) }, 'Reject')));
}

// --- Home: what needs the owner ---
async function drawHome() {
  const paint = painter();
  const [appr, jobs] = await Promise.all([api('GET', '/api/approvals'), api('GET', '/api/jobs').catch(() => ({ failed: [] }))]);
  const list = appr;
  const incident = ((await api('GET', '/api/events?kind=incident.&limit=1')).events || [])[0];
  const health = await api('GET', '/api/health').catch(() => ({}));
  paint(
    incident && incident.kind === 'incident.reported' ? el('div', { class: 'card incident' }, incident.payload.message) : null,
    health.telegram && health.telegram.down ? el('div', { class: 'card incident' }, 'Telegram refused the bot token, so your phone gets nothing: set a new one with `buddi telegram setup`.') : null,
    el('h2', {}, 'Needs you'),
    list.length ? list.map(a => approvalCard(a)) : el('p', { class: 'muted' }, 'No approvals are waiting.'),
    el('h2', {}, 'Failed jobs'),
    (jobs.failed || []).length ? (jobs.failed || []).map(j => el('div', { class: 'card' },
      el('div', {}, el('strong', {}, j.kind), ' ', el('span', { class: 'muted' }, `#${j.id} · ${j.attempts} attempts`)),
      el('pre', {}, j.error),
      el('button', { class: 'primary', onclick: () => act(() => api('POST', `/api/jobs/${j.id}/retry`), 'Retrying') }, 'Retry'), ' ',
      el('button', { onclick: () => act(() => api('POST', `/api/jobs/${j.id}/dismiss`), 'Dismissed') }, 'Dismiss')))
      : el('p', { class: 'muted' }, 'No failed jobs.'));
}

// --- Chat ---
// toolData draws a tool's structured output: an image artifact, or a preview to open.
function toolData(data) {
  if (!data) return null;
  if (data.renderer === 'image' && /^[0-9a-f-]{36}$/.test(data.artifact || '')) {
    return el('img', { class: 'artifact', src: '/api/artifacts/' + data.artifact, alt: data.title || 'screenshot' });
  }
  if (data.renderer === 'offers' && Array.isArray(data.offers)) {
    return el('div', { class: 'offers' }, data.offers.map(o => el('button', { onclick: async ev => {
      ev.target.disabled = true;
      try { const sent = await api('POST', `/api/offers/${o.id}/take`); if (chat) { chat.conv = sent.conversation.id; watch(sent.run_id); } }
      catch (e) { say(e.message); }
    } }, o.label)));
  }
  if (data.renderer === 'preview' && typeof data.src === 'string') {
    const name = data.src.split('/').filter(Boolean)[2] || '';
    return el('button', { class: 'primary', onclick: async () => {
      try { const { url } = await api('GET', `/api/preview/developer/${encodeURIComponent(name)}/link`); window.open(url, '_blank', 'noopener'); }
      catch (e) { say(e.message); }
    } }, 'Open the preview of ' + (data.title || name));
  }
  return null;
}

function renderEntry(e) {
  const b = e.body || {};
  switch (e.kind) {
    case 'user': return el('div', { class: 'msg user' }, b.offer ? `offer: ${b.offer}` : b.text);
    case 'owner-adds': return el('div', { class: 'msg user' }, b.text);
    case 'marker': return el('div', { class: 'msg marker' }, 'This turn failed and was not answered.');
    case 'tool': return el('div', { class: 'tool' }, (b.is_error ? '✗ ' : '✓ ') + b.tool + ': ', el('pre', {}, b.content), toolData(b.data));
    case 'assistant': return (b.parts || []).map(p => p.type === 'text'
      ? el('div', { class: 'msg assistant' }, p.text)
      : el('div', { class: 'tool' }, '→ ' + p.name + ' ' + JSON.stringify(p.args)));
  }
  return null;
}

async function drawChat(agentId) {
  const paint = painter();
  if (!agentId) {
    const def = agents.find(a => a.default) || agents[0];
    if (!def) { paint(el('p', {}, 'No agents are loaded.')); return; }
    location.hash = '#/chat/' + def.id;
    return;
  }
  const agent = agents.find(a => a.id === agentId) || { id: agentId, handle: agentId };
  if (!chat || chat.agent !== agentId) {
    if (chat && chat.socket) chat.socket.close();
    const convs = await api('GET', '/api/conversations?limit=1&agent=' + encodeURIComponent(agentId));
    chat = { agent: agentId, conv: (convs.conversations[0] || {}).id || '', socket: null, streaming: null, run: '' };
  }
  const thread = el('div', { class: 'thread', id: 'thread' });
  if (chat.conv) {
    const got = await api('GET', '/api/conversations/' + chat.conv);
    thread.append(...got.transcript.map(renderEntry).flat().filter(Boolean));
    if (got.conversation.active_run) watch(got.conversation.active_run);
    const pending = (await api('GET', '/api/approvals')).filter(a => a.conversation_id === chat.conv);
    thread.append(...pending.map(a => approvalCard(a)));
  } else {
    thread.append(el('p', { class: 'muted' }, `Write to ${agent.handle} to start.`));
  }
  if (chat.streaming) thread.append(chat.streaming);
  const draft = document.querySelector('form.compose textarea')?.value || '';
  const input = el('textarea', { name: 'text', placeholder: `Message ${agent.handle}`, 'aria-label': 'Message' });
  input.value = draft;
  const form = el('form', { class: 'compose', onsubmit: ev => { ev.preventDefault(); send(input.value); input.value = ''; } },
    input, el('button', { class: 'primary', type: 'submit' }, 'Send'),
    el('button', { type: 'button', id: 'stop', onclick: () => chat.conv && act(() => api('POST', `/api/conversations/${chat.conv}/stop`), 'Stopping') }, 'Stop'));
  input.addEventListener('keydown', ev => { if (ev.key === 'Enter' && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); } });
  paint(el('h2', {}, agent.handle + (agent.available === false ? ' (cannot run: ' + agent.problem + ')' : '')), thread, form);
  input.focus();
}

async function send(text) {
  if (!text.trim()) return;
  try {
    const sent = await api('POST', '/api/messages', { agent: chat.agent, conversation_id: chat.conv, text, surface: 'dashboard' });
    if (sent.ended) say(sent.ended.carried_over);
    chat.conv = sent.conversation.id;
    document.getElementById('thread')?.append(el('div', { class: 'msg user' }, text));
    watch(sent.run_id);
  } catch (e) { say(e.message); }
}

// watch follows a run over the conversation's websocket: text streams into one bubble, calls
// and cards show as they come, and the end re-reads the transcript.
function watch(runID) {
  if (chat.socket && chat.run === runID) return;
  if (chat.socket) chat.socket.close();
  chat.run = runID;
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${proto}//${location.host}/api/conversations/${chat.conv}/live?run=${runID}`);
  chat.socket = ws;
  ws.onmessage = msg => {
    const ev = JSON.parse(msg.data);
    const thread = document.getElementById('thread');
    if (!thread || ev.run_id !== chat.run) return;
    switch (ev.type) {
      case 'text':
        if (!chat.streaming) { chat.streaming = el('div', { class: 'msg assistant streaming' }); thread.append(chat.streaming); }
        chat.streaming.textContent += ev.text;
        break;
      case 'tool.call': chat.streaming = null; thread.append(el('div', { class: 'tool' }, '→ ' + ev.tool + ' ' + (ev.args || ''))); break;
      case 'tool.result': thread.append(el('div', { class: 'tool' }, (ev.is_error ? '✗ ' : '✓ ') + ev.tool + ': ', el('pre', {}, ev.text), toolData(ev.data))); break;
      case 'approval':
        chat.streaming = null;
        thread.append(approvalCard({ id: ev.action_id, tool: ev.tool, agent: chat.agent, envelope: { summary: ev.text, preview: ev.preview } }));
        break;
      case 'run.failed':
        chat.streaming = null;
        thread.append(el('div', { class: 'msg failed' }, ev.text + (ev.retry ? ' Send it again to retry.' : '')));
        ws.close(); chat.socket = null;
        break;
      case 'run.finished':
        chat.streaming = null; ws.close(); chat.socket = null;
        if (current.page === 'chat') drawChat(chat.agent);
        break;
    }
  };
}

// --- Activity: events, jobs and approvals ---
async function drawActivity() {
  const paint = painter();
  const [evs, jobs, appr] = await Promise.all([api('GET', '/api/events?limit=100'), api('GET', '/api/jobs?all=1').catch(() => ({ failed: [] })), api('GET', '/api/approvals?state=all')]);
  paint(
    el('h2', {}, 'Events'),
    el('table', {}, el('tr', {}, el('th', {}, 'when'), el('th', {}, 'event'), el('th', {}, 'details')),
      evs.events.map(e => el('tr', {}, el('td', {}, new Date(e.created_at).toLocaleTimeString()), el('td', {}, e.kind), el('td', { class: 'muted' }, JSON.stringify(e.payload).slice(0, 160))))),
    el('h2', {}, 'Jobs that failed, by cause'),
    (jobs.causes || []).length ? (jobs.causes || []).map(c => el('div', { class: 'card' },
      el('div', {}, el('strong', {}, `${c.jobs.length} failed: `), c.why, c.passed ? ' It has plausibly passed.' : ''),
      el('table', {}, c.jobs.map(id => (jobs.failed || []).find(j => j.id === id)).filter(Boolean).map(j => el('tr', {},
        el('td', {}, '#' + j.id), el('td', {}, j.kind), el('td', {}, j.dismissed ? 'dismissed' : j.state),
        el('td', {}, el('button', { class: c.passed ? 'primary' : '', onclick: () => act(() => api('POST', `/api/jobs/${j.id}/retry`), 'Retrying') }, 'Retry'), ' ',
          j.dismissed ? null : el('button', { onclick: () => act(() => api('POST', `/api/jobs/${j.id}/dismiss`), 'Dismissed') }, 'Dismiss')))))))
      : el('p', { class: 'muted' }, 'None.'),
    el('h2', {}, 'Approvals'),
    el('table', {}, appr.map(a => el('tr', {}, el('td', {}, a.tool), el('td', {}, (a.envelope || {}).summary || ''), el('td', {}, a.approval.state)))));
}

// --- Settings → Developer ---
async function drawDeveloper() {
  const paint = painter();
  const d = await api('GET', '/api/developer');
  paint(
    el('h2', {}, 'Settings → Developer'),
    el('p', { class: 'sentence' }, d.sentence),
    el('h2', {}, 'Workspaces'),
    d.workspaces.length ? el('table', {}, d.workspaces.map(w => el('tr', {}, el('td', {}, w.agent), el('td', {}, w.directory),
      el('td', {}, el('select', { 'aria-label': 'mode of ' + w.agent, onchange: ev => act(() => api('POST', `/api/developer/agents/${w.agent}/mode`, { mode: ev.target.value }), 'Mode set') },
        ['ask', 'edit', 'run'].map(m => el('option', { value: m, selected: m === w.mode }, m)))))))
      : el('p', { class: 'muted' }, 'No agent has a workspace.'),
    el('h2', {}, 'Running processes'),
    d.processes.length ? el('div', {}, el('table', {}, d.processes.map(p => el('tr', {}, el('td', {}, p.agent), el('td', {}, p.name), el('td', {}, (p.argv || []).join(' ')), el('td', {}, p.port || ''),
      el('td', {}, p.port ? toolData({ renderer: 'preview', src: `/preview/developer/${p.name}/`, title: p.name }) : null, ' ',
        el('button', { onclick: () => act(() => api('POST', `/api/developer/processes/${p.agent}/${p.name}/stop`), 'Stopped ' + p.name) }, 'Stop'))))),
      el('button', { class: 'danger', onclick: () => act(() => api('POST', '/api/developer/processes/stop-all'), 'Stopped all') }, 'Stop all processes'))
      : el('p', { class: 'muted' }, 'No process is running.'),
    el('h2', {}, 'On your tailnet'),
    el('label', {},
      el('input', { type: 'checkbox', 'aria-label': 'Tailscale port per process', checked: d.tailnet.previews,
        onchange: ev => act(() => api('POST', '/api/developer/tailnet', { previews: ev.target.checked }), ev.target.checked ? 'Processes get tailnet ports' : 'Tailnet ports closed') }),
      ' Give each started process its port on the tailnet'),
    el('p', { class: 'sentence' }, d.tailnet.sentence),
    d.tailnet.node ? null : el('p', { class: 'muted' }, 'buddi runs without the tailnet now: the switch takes effect once it starts with `buddi serve --tailnet` (or `buddi tailnet on`).'),
    el('h2', {}, 'Commands you allowed'),
    d.allowed.length ? el('table', {}, d.allowed.map(c => el('tr', {}, el('td', {}, c.agent), el('td', {}, c.workspace), el('td', {}, el('code', {}, c.command)), el('td', {}, c.prefix ? 'prefix' : 'exact'),
      el('td', {}, el('button', { onclick: () => act(() => api('POST', `/api/developer/allowed/${c.id}/forget`), 'Forgotten') }, 'Forget')))))
      : el('p', { class: 'muted' }, 'None yet: an “always” on a card adds one.'));
}

// --- routing and refresh ---
// generation counts the pages asked for: a drawing that began before the latest one paints
// nothing, so a slow Home cannot cover the Chat the owner has moved to since.
let generation = 0;
function painter() {
  const mine = generation;
  // Lists are drawn as their items and absent parts (null, false) as nothing: the
  // DOM's replaceChildren would print "[object HTMLDivElement]" and "null" for them.
  return (...nodes) => {
    if (mine === generation) main.replaceChildren(...nodes.flat(Infinity).filter(n => n !== null && n !== undefined && n !== false));
  };
}

async function refresh() {
  generation++;
  const [, page, arg] = (location.hash || '#/home').split('/');
  current = { page: page || 'home', agent: page === 'chat' ? (arg || '') : '' };
  for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', a.dataset.page === current.page);
  await drawRail();
  try {
    if (current.page === 'chat') await drawChat(current.agent);
    else if (current.page === 'activity') await drawActivity();
    else if (current.page === 'settings') await drawDeveloper();
    else await drawHome();
  } catch (e) { say(e.message); }
}

let pending = null;
// refreshSoon redraws what the event log changed. The chat page keeps its thread and the
// owner's draft: its own socket brings the run's events, so only the rail is redrawn there.
function refreshSoon() {
  clearTimeout(pending);
  pending = setTimeout(() => { if (current.page === 'chat') drawRail(); else refresh(); }, 150);
}

function live() {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${proto}//${location.host}/api/live`);
  ws.onmessage = () => refreshSoon();
  ws.onclose = () => setTimeout(live, 2000);
}

window.addEventListener('hashchange', refresh);
api('GET', '/api/session').then(() => { refresh(); live(); }).catch(e => say(e.message));
