// buddi's dashboard: every view is read from the API (which projects the event log), and
// the live channel only says when to read again. Everything is drawn with dom.js: text goes
// in as text, and the only HTML is the server's sanitised Markdown.

import { h, fill, add, words, sanitised } from '/dom.js';
import { pages } from '/pages.js';
import { watch } from '/watch.js';
import { phone } from '/phone.js';
import { files } from '/files.js';
import { memory } from '/memory.js';
import { email } from '/email.js';
import { settingsNav } from '/nav.js';
import { canvasPanel } from '/canvas.js';

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
  // /api/health answers 503 when buddi is degraded, with the report itself as the body.
  const degraded = res.status === 503 && path === '/api/health' && data.status;
  if (!res.ok && !degraded) throw new Error(data.error || res.statusText);
  return data;
}

const main = document.getElementById('main');
const rail = document.getElementById('rail');
const status = document.getElementById('status');
let agents = [];
let current = { page: 'home', agent: '' };
let chat = null; // the chat page's state: {agent, conv, socket, streaming}

function say(text) { status.textContent = text || ''; }

async function act(fn, doneText) {
  try { await fn(); if (doneText) say(doneText); } catch (e) { say(e.message); }
  refresh();
}

// when tells a time as the clock on the wall: today's as hh:mm, older ones with their day.
function when(iso) {
  const d = new Date(iso);
  if (isNaN(d)) return '';
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === new Date().toDateString() ? time : d.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' + time;
}

// --- the agent rail: a count for pending approvals, a dot for a held question ---
async function drawRail() {
  try { agents = (await api('GET', '/api/attention')).agents || []; } catch (e) { say(e.message); return; }
  fill(rail, agents.map(a => h('a', {
    href: '#/chat/' + encodeURIComponent(a.id), 'data-agent': a.id,
    class: [a.available ? null : 'unavailable', current.agent === a.id ? 'current' : null],
    title: a.available ? a.name : a.problem,
  }, h('span', {}, a.handle), h('span', {},
    a.pending ? h('span', { class: 'count', title: words(' ', a.pending, 'waiting for you') }, a.pending) : null,
    a.question ? h('span', { class: 'dot', title: 'a question is waiting for your answer' }) : null))));
}

// --- what the owner is in the middle of, kept across redraws ---
// Home redraws whenever the event log grows, and a page drawn again is drawn from the API.
// What the owner has picked on a card but not yet sent (by action), a half-typed answer to a
// question (by conversation) and a Cancel not yet confirmed (by job) live here, not in the
// nodes a redraw replaces; each is dropped once it is sent.
const kept = {
  picks: new Map(),      // action id → {picks: {choice: option}, remember}
  answers: new Map(),    // conversation id → the answer's text so far
  cancelling: new Set(), // ids of the failed jobs whose Cancel waits for its confirmation
};

// --- approval cards, shared by Home and Chat ---
// A card offers the action's declared choices (the default picked, or what the owner picked
// before a redraw) and, for a tool that allows it, "remember" for this conversation or
// always; Approve sends what is picked.
let cardSerial = 0;
function approvalCard(a, onDone) {
  const env = a.envelope || {};
  const serial = ++cardSerial; // radio groups are named per card, so two cards never share one
  const before = kept.picks.get(a.id) || { picks: {} };
  const chosen = c => Object.hasOwn(before.picks, c.name) ? before.picks[c.name] : c.default;
  const choices = (env.choices || []).map((c, i) => {
    const options = c.options || [];
    const label = h('span', { class: 'choice-name' }, c.name);
    const pick = chosen(c);
    if (options.length > 4) {
      return h('label', { class: 'choice', 'data-choice': c.name }, label, ' ',
        h('select', { name: c.name },
          options.includes(pick) ? null : h('option', { value: '', selected: true, disabled: true }, 'choose'),
          options.map(o => h('option', { value: o, selected: o === pick }, o))));
    }
    return h('fieldset', { class: 'choice', 'data-choice': c.name }, h('legend', {}, c.name),
      options.map(o => h('label', {}, h('input', { type: 'radio', name: `c${serial}-${i}`, value: o, checked: o === pick }), ' ', o)));
  });
  const remember = a.reusable ? h('fieldset', { class: 'choice remember' }, h('legend', {}, 'Remember'),
    [['', 'just this once'], a.conversation_id ? ['conversation', 'this conversation'] : null, ['all', 'always']]
      .filter(Boolean)
      .map(([v, text]) => h('label', {}, h('input', { type: 'radio', name: `r${serial}`, value: v, checked: v === (before.remember || '') }), ' ', text))) : null;
  // decided forgets the card's picks once its decision is recorded.
  const decided = path => async () => {
    await api('POST', `/api/approvals/${encodeURIComponent(a.id)}/${path}`, path === 'approve' ? decision() : undefined);
    kept.picks.delete(a.id);
  };
  const card = h('div', { class: 'card approval', 'data-action': a.id, onchange: () => kept.picks.set(a.id, decision()) },
    h('div', {}, h('strong', {}, env.summary || a.tool), ' ', h('span', { class: 'muted' }, words(' · ', a.agent, a.tool))),
    env.preview || a.card ? h('pre', {}, env.preview || a.card) : null,
    choices.length || remember ? h('div', { class: 'choices' }, choices, remember) : null,
    h('div', { class: 'buttons' },
      h('button', { class: 'primary', onclick: () => act(decided('approve'), 'Approved').then(onDone) }, 'Approve'),
      h('button', { class: 'danger', onclick: () => act(decided('reject'), 'Rejected').then(onDone) }, 'Reject')));
  // decision reads what the owner picked on this card.
  function decision() {
    const picks = {};
    for (const f of card.querySelectorAll('[data-choice]')) {
      const picked = f.querySelector('select') || f.querySelector('input:checked');
      if (picked && picked.value) picks[f.dataset.choice] = picked.value;
    }
    const r = card.querySelector('.remember input:checked');
    return r && r.value ? { picks, remember: r.value } : { picks };
  }
  return card;
}

// placeCard puts a card in the thread once: a card is keyed by its action, whichever of the
// transcript, the waiting approvals or the live stream brings it first.
function placeCard(thread, a) {
  if (!a.id || [...thread.querySelectorAll('[data-action]')].some(e => e.dataset.action === String(a.id))) return;
  add(thread, approvalCard(a));
}

// failedJob is one failed job with what the owner can do about it: retry, dismiss, or cancel,
// which asks once more in a sentence before it gives the work up.
function failedJob(j) {
  const confirming = kept.cancelling.has(j.id);
  const cancelling = on => () => { if (on) kept.cancelling.add(j.id); else kept.cancelling.delete(j.id); refresh(); };
  return h('div', { class: 'card job', 'data-job': j.id },
    h('div', {}, h('strong', {}, j.kind), ' ', h('span', { class: 'muted' }, words(' · ', '#' + j.id, j.attempts ? words(' ', j.attempts, j.attempts === 1 ? 'attempt' : 'attempts') : null))),
    j.error ? h('pre', {}, j.error) : null,
    confirming
      ? h('div', { class: 'confirm' },
        h('p', {}, `Cancel job #${j.id} (${j.kind})? buddi gives this work up: it is not tried again and leaves this list, and stays on record under Activity, where Retry still brings it back.`),
        h('div', { class: 'buttons' },
          h('button', { class: 'danger confirm-cancel', onclick: () => act(async () => { await api('POST', `/api/jobs/${j.id}/cancel`); kept.cancelling.delete(j.id); }, words(' ', 'Cancelled job', '#' + j.id)) }, 'Cancel the job'),
          h('button', { class: 'keep', onclick: cancelling(false) }, 'Keep it')))
      : h('div', { class: 'buttons' },
        h('button', { class: 'primary retry', onclick: () => act(() => api('POST', `/api/jobs/${j.id}/retry`), 'Retrying') }, 'Retry'),
        j.dismissed ? null : h('button', { class: 'dismiss', onclick: () => act(() => api('POST', `/api/jobs/${j.id}/dismiss`), 'Dismissed') }, 'Dismiss'),
        h('button', { class: 'danger cancel', onclick: cancelling(true) }, 'Cancel')));
}

// openChat opens an agent's chat on one conversation (the one a question was asked in),
// rather than the agent's latest.
function openChat(agent, conv) {
  if (chat && chat.socket) chat.socket.close();
  chat = { agent, conv, socket: null, streaming: null, run: '' };
  location.hash = '#/chat/' + encodeURIComponent(agent);
}

// questionCard is a question an agent holds for the owner, with a box whose text is sent as
// the owner's next message in that conversation: the answer the agent waits for.
function questionCard(q) {
  const who = q.handle || q.agent;
  const input = h('textarea', { name: 'answer', rows: 2, placeholder: `Your answer to ${who}`, 'aria-label': `Your answer to ${who}`,
    oninput: () => kept.answers.set(q.conversation_id, input.value) });
  input.value = kept.answers.get(q.conversation_id) || '';
  const form = h('form', { class: 'answer', onsubmit: ev => {
    ev.preventDefault();
    const text = input.value;
    if (!text.trim()) { say('Write your answer first.'); return; }
    act(async () => {
      await api('POST', '/api/messages', { conversation_id: q.conversation_id, resume: true, text, surface: 'dashboard' });
      kept.answers.delete(q.conversation_id);
    }, words(' ', 'Answer sent to', who));
  } }, input, h('button', { class: 'primary', type: 'submit' }, 'Answer'));
  input.addEventListener('keydown', ev => { if (ev.key === 'Enter' && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); } });
  return h('div', { class: 'card question', 'data-question': q.conversation_id },
    h('div', {}, h('strong', {}, who), ' ', h('span', { class: 'muted' }, words(' · ', 'asks you', when(q.asked_at)))),
    h('p', { class: 'asked' }, q.question),
    form,
    h('a', { href: '#/chat/' + encodeURIComponent(q.agent), class: 'open-chat', onclick: ev => { ev.preventDefault(); openChat(q.agent, q.conversation_id); } }, 'Open the chat'));
}

// focusOf says which of Home's fields the owner is typing in (by its card), so a redraw can
// give the focus and the caret back to the field that replaces it.
function focusOf() {
  const e = document.activeElement;
  const card = e && e.closest && main.contains(e) ? e.closest('[data-question]') : null;
  if (!card || e.tagName !== 'TEXTAREA') return null;
  return { conv: card.dataset.question, start: e.selectionStart, end: e.selectionEnd };
}

function refocus(f) {
  if (!f) return;
  const card = [...main.querySelectorAll('[data-question]')].find(c => c.dataset.question === f.conv);
  const input = card && card.querySelector('textarea');
  if (input) { input.focus(); input.setSelectionRange(f.start, f.end); }
}

// arrived is one thing buddi told the owner unasked (notifyOwner's row): marked seen once
// drawn on Home, so the phone's copy and this one agree.
function arrived(n) {
  if (!n.seen_at) api('POST', `/api/notifications/${n.id}/seen`).catch(() => {});
  return h('div', { class: words(' ', 'card notice', n.urgency, n.seen_at ? 'seen' : null), 'data-notice': n.id },
    h('div', {}, h('strong', {}, n.title), ' ', h('span', { class: 'muted' }, when(n.created_at))),
    n.body ? h('p', {}, n.body) : null,
    n.link ? h('a', { href: n.link }, 'Open') : null);
}

// --- Home: what needs the owner ---
async function drawHome() {
  const paint = painter();
  const [list, asked, jobs, incidents, health, notices] = await Promise.all([
    api('GET', '/api/approvals'),
    api('GET', '/api/questions').catch(() => ({ questions: [] })),
    api('GET', '/api/jobs').catch(() => ({ failed: [] })),
    api('GET', '/api/events?kind=incident.&limit=1'),
    api('GET', '/api/health').catch(() => ({})),
    api('GET', '/api/notifications?limit=20').catch(() => ({ notifications: [] })),
  ]);
  const told = notices.notifications || [];
  const incident = (incidents.events || [])[0];
  const failed = jobs.failed || [];
  const questions = asked.questions || [];
  // What is kept for cards that are gone (decided, answered or cancelled elsewhere) goes too.
  const waiting = new Set((list || []).map(a => a.id));
  for (const id of kept.picks.keys()) if (!waiting.has(id)) kept.picks.delete(id);
  const open = new Set(questions.map(q => q.conversation_id));
  for (const id of kept.answers.keys()) if (!open.has(id)) kept.answers.delete(id);
  const listed = new Set(failed.map(j => j.id));
  for (const id of kept.cancelling) if (!listed.has(id)) kept.cancelling.delete(id);
  const focus = focusOf();
  const painted = paint(
    incident && incident.kind === 'incident.reported' ? h('div', { class: 'card incident' }, (incident.payload || {}).message || incident.detail) : null,
    health.telegram && health.telegram.down ? h('div', { class: 'card incident' }, 'Telegram refused the bot token, so your phone gets nothing: set a new one with `buddi telegram setup`.') : null,
    h('h2', {}, 'Needs you'),
    (list || []).length ? list.map(a => approvalCard(a)) : h('p', { class: 'muted' }, 'No approvals are waiting.'),
    questions.length ? h('div', { class: 'questions' }, questions.map(questionCard)) : h('p', { class: 'muted' }, 'No agent is waiting for an answer.'),
    h('h2', {}, 'Failed jobs'),
    failed.length ? failed.map(failedJob) : h('p', { class: 'muted' }, 'No failed jobs.'),
    h('h2', {}, 'What arrived'),
    told.length ? told.map(arrived) : h('p', { class: 'muted' }, 'Nothing has arrived yet: mission reports, reminders and alerts show here.'));
  if (painted) refocus(focus);
}

// --- Chat ---
// toolData draws a tool's structured output: an image artifact, or a preview to open.
function toolData(data) {
  if (!data) return null;
  if (data.renderer === 'image' && /^[0-9a-f-]{36}$/.test(data.artifact || '')) {
    return h('img', { class: 'artifact', src: '/api/artifacts/' + data.artifact, alt: data.title || 'screenshot' });
  }
  if (data.renderer === 'file' && /^[0-9a-f-]{36}$/.test(data.artifact || '')) { // artifacts.attach
    const name = typeof data.name === 'string' && data.name ? data.name : 'file', at = '/api/files/' + data.artifact;
    return h('div', { class: 'file' }, /^image\/(png|jpeg|gif|webp)$/.test(data.media_type || '') ? h('img', { class: 'artifact', src: at + '/preview', alt: name }) : null,
      h('a', { class: 'download', href: at + '/download', download: name }, words(' ', 'Download', name)), ' ', h('a', { href: '#/files/' + data.artifact }, 'Open in Files'));
  }
  if (data.renderer === 'offers' && Array.isArray(data.offers)) {
    return h('div', { class: 'offers' }, data.offers.map(o => h('button', { onclick: async ev => {
      ev.target.disabled = true;
      try { const sent = await api('POST', `/api/offers/${o.id}/take`); if (chat) { chat.conv = sent.conversation.id; follow(sent.run_id); } }
      catch (e) { say(e.message); }
    } }, o.label)));
  }
  if (data.renderer === 'preview' && typeof data.src === 'string') {
    const name = data.src.split('/').filter(Boolean)[2] || '';
    return h('button', { class: 'primary', onclick: async () => {
      try { const { url } = await api('GET', `/api/preview/developer/${encodeURIComponent(name)}/link`); window.open(url, '_blank', 'noopener'); }
      catch (e) { say(e.message); }
    } }, words(' ', 'Open the preview of', data.title || name));
  }
  return null;
}

// toolLine is a tool's answer: its mark, name and content, keyed by its call.
function toolLine(tool, isError, content, data, callID) {
  return h('div', { class: 'tool', 'data-result': callID || null }, words(' ', isError ? '✗' : '✓', (tool || 'tool') + ':'), ' ', h('pre', {}, content), toolData(data));
}

// callLine is a tool call with its arguments, as JSON text, keyed by its id.
function callLine(name, args, callID) {
  const text = typeof args === 'string' ? args : args === undefined || args === null ? '' : JSON.stringify(args);
  return h('div', { class: 'tool', 'data-call': callID || null }, words(' ', '→', name, text));
}

// drawnOnce says whether the thread already has the element of a call or its result.
function drawnOnce(thread, attr, id) {
  return !!id && [...thread.querySelectorAll(`[${attr}]`)].some(e => e.getAttribute(attr) === String(id));
}

function renderEntry(e) {
  const b = e.body || {};
  switch (e.kind) {
    case 'user': return h('div', { class: 'msg user' }, b.offer ? words(' ', 'offer:', b.offer) : b.text);
    case 'owner-adds': return h('div', { class: 'msg user' }, b.text);
    case 'marker': return h('div', { class: 'msg marker' }, 'This turn failed and was not answered.');
    case 'tool': return toolLine(b.tool, b.is_error, b.content, b.data, b.call_id);
    case 'assistant': return (b.parts || []).map(p => p.type === 'text'
      ? (typeof p.html === 'string' ? h('div', { class: 'msg assistant md' }, sanitised(p.html)) : h('div', { class: 'msg assistant' }, p.text))
      : callLine(p.name, p.args, p.id));
  }
  return null;
}

// chatDraws counts the drawings of the chat: one that began before the latest (an approval's
// redraw overtaken by the run's end) neither paints nor follows a run, so a stale thread
// never comes back and no stream replays into the newer one.
let chatDraws = 0;
async function drawChat(agentId) {
  const paint = painter();
  const draw = ++chatDraws;
  const followed = chat ? chat.run : ''; // the run followed as this drawing began
  if (!agentId) {
    const def = agents.find(a => a.default) || agents[0];
    if (!def) { paint(h('p', {}, 'No agents are loaded.')); return; }
    location.hash = '#/chat/' + encodeURIComponent(def.id);
    return;
  }
  const agent = agents.find(a => a.id === agentId) || { id: agentId, handle: agentId };
  if (!chat || chat.agent !== agentId) {
    if (chat && chat.socket) chat.socket.close();
    const convs = await api('GET', '/api/conversations?limit=1&agent=' + encodeURIComponent(agentId));
    chat = { agent: agentId, conv: ((convs.conversations || [])[0] || {}).id || '', socket: null, streaming: null, run: '' };
  }
  const thread = h('div', { class: 'thread', id: 'thread' });
  const board = canvasPanel(chat.conv);
  let active = '';
  if (chat.conv) {
    const [got, waiting] = await Promise.all([api('GET', '/api/conversations/' + encodeURIComponent(chat.conv)), api('GET', '/api/approvals')]);
    add(thread, (got.transcript || []).map(renderEntry));
    for (const e of got.transcript || []) if (e.kind === 'tool' && e.body) board.add(e.body.view, e.body.call_id);
    for (const a of (waiting || []).filter(a => a.conversation_id === chat.conv)) {
      placeCard(thread, a);
      board.add({ renderer: 'envelope', source: 'pending', tool: a.tool, title: (a.envelope || {}).summary, text: (a.envelope || {}).preview }, a.call_id || a.id);
    }
    if (draw !== chatDraws) return; // a later drawing has the newer transcript
    active = got.conversation.active_run || '';
    // The run followed when this drawing began has ended: nothing more to follow (a run the
    // owner started since, by sending, is followed on).
    if (!active && chat.socket && chat.run === followed) { chat.socket.close(); chat.socket = null; chat.run = ''; chat.streaming = null; }
    // The stream's replay of what the transcript already holds is not drawn again: text
    // streamed before the run's latest committed entry, and calls and results by their ids.
    const mine = (got.transcript || []).filter(e => e.run_id && e.run_id === active).map(e => new Date(e.created_at).getTime());
    chat.drawnUntil = { run: active, at: mine.length ? Math.max(...mine) : 0 };
  } else {
    add(thread, h('p', { class: 'muted' }, `Write to ${agent.handle} to start.`));
  }
  if (chat.streaming) add(thread, chat.streaming);
  const draft = document.querySelector('form.compose textarea')?.value || '';
  const input = h('textarea', { name: 'text', placeholder: `Message ${agent.handle}`, 'aria-label': 'Message' });
  input.value = draft;
  const form = h('form', { class: 'compose', onsubmit: ev => { ev.preventDefault(); send(input.value); input.value = ''; } },
    input, h('button', { class: 'primary', type: 'submit' }, 'Send'),
    h('button', { type: 'button', id: 'stop', onclick: () => chat.conv && act(() => api('POST', `/api/conversations/${encodeURIComponent(chat.conv)}/stop`), 'Stopping') }, 'Stop'));
  input.addEventListener('keydown', ev => { if (ev.key === 'Enter' && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); } });
  if (draw !== chatDraws) return;
  if (!paint(h('h2', {}, agent.available === false ? words(' ', agent.handle, `(cannot run: ${agent.problem || 'unavailable'})`) : agent.handle),
    h('div', { class: 'with-canvas' }, h('div', { class: 'chat-column' }, thread, form), board.el))) return;
  chat.board = board;
  input.focus();
  // The run's stream is followed once the thread it draws into is on the page; its replay
  // brings cards the thread already has, which placeCard keeps once.
  if (active) follow(active);
}

async function send(text) {
  if (!text.trim()) return;
  try {
    const sent = await api('POST', '/api/messages', { agent: chat.agent, conversation_id: chat.conv, text, surface: 'dashboard' });
    if (sent.ended) say(sent.ended.carried_over);
    chat.conv = sent.conversation.id;
    const thread = document.getElementById('thread');
    if (thread) add(thread, h('div', { class: 'msg user' }, text));
    follow(sent.run_id);
  } catch (e) { say(e.message); }
}

// follow follows a run over the conversation's websocket: text streams into one bubble, calls
// and cards show as they come, and the end re-reads the transcript. The thread records the
// kinds of live events it drew in data-live.
function follow(runID) {
  if (!runID) return;
  if (chat.socket && chat.run === runID) return;
  if (chat.socket) chat.socket.close();
  chat.run = runID;
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${proto}//${location.host}/api/conversations/${encodeURIComponent(chat.conv)}/live?run=${encodeURIComponent(runID)}`);
  chat.socket = ws;
  ws.onmessage = msg => {
    const ev = JSON.parse(msg.data);
    const thread = document.getElementById('thread');
    if (!thread || ev.run_id !== chat.run) return;
    thread.dataset.live = words(' ', thread.dataset.live || '', ev.type);
    switch (ev.type) {
      case 'text':
        if (chat.drawnUntil && chat.drawnUntil.run === ev.run_id && new Date(ev.at).getTime() <= chat.drawnUntil.at) break;
        if (!chat.streaming) { chat.streaming = h('div', { class: 'msg assistant streaming' }); add(thread, chat.streaming); }
        chat.streaming.textContent += ev.text || '';
        break;
      case 'tool.call': chat.streaming = null; if (!drawnOnce(thread, 'data-call', ev.call_id)) add(thread, callLine(ev.tool, ev.args, ev.call_id)); break;
      case 'tool.result': chat.streaming = null; if (!drawnOnce(thread, 'data-result', ev.call_id)) add(thread, toolLine(ev.tool, ev.is_error, ev.text, ev.data, ev.call_id));
        if (chat.board) chat.board.add(ev.view, ev.call_id);
        break;
      case 'approval':
        // The stream replays cards already decided: a card is drawn only while its action
        // waits (the action is stored before its card is published), and once.
        chat.streaming = null;
        if (chat.board) chat.board.add(ev.view, ev.call_id);
        api('GET', '/api/approvals').then(list => {
          const a = (list || []).find(a => a.id === ev.action_id);
          const now = document.getElementById('thread');
          if (a && now) placeCard(now, a);
        }).catch(e => say(e.message));
        break;
      case 'run.waiting': // the provider asked buddi to wait: say so, and until when
        add(thread, h('div', { class: 'msg waiting muted' }, ev.text));
        break;
      case 'run.retrying': // the attempt broke off: what it streamed is void
        if (chat.streaming) { chat.streaming.remove(); chat.streaming = null; }
        add(thread, h('div', { class: 'msg waiting muted' }, ev.text));
        break;
      case 'run.failed':
        chat.streaming = null;
        add(thread, h('div', { class: 'msg failed' }, words(' ', ev.text, ev.retry ? 'Send it again to retry.' : null)));
        ws.close(); chat.socket = null;
        break;
      case 'run.finished':
        chat.streaming = null; ws.close(); chat.socket = null;
        if (current.page === 'chat') drawChat(chat.agent);
        break;
    }
  };
}

// --- Activity: a timeline of events, then jobs and approvals ---
function timelineLine(e) {
  return h('li', { 'data-kind': e.kind, title: e.kind },
    h('time', { datetime: e.created_at }, when(e.created_at)),
    h('span', { class: 'what' }, e.words || e.kind),
    e.detail ? h('span', { class: 'detail muted' }, e.detail) : null);
}

async function drawActivity() {
  const paint = painter();
  const [evs, jobs, appr, fetched] = await Promise.all([api('GET', '/api/events?limit=100'), api('GET', '/api/jobs?all=1').catch(() => ({ failed: [] })), api('GET', '/api/approvals?state=all'),
    api('GET', '/api/web/fetches?limit=50').catch(() => null)]);
  const failed = jobs.failed || [];
  paint(
    h('h2', {}, 'What happened'),
    (evs.events || []).length ? h('ol', { class: 'timeline' }, evs.events.map(timelineLine)) : h('p', { class: 'muted' }, 'Nothing yet.'),
    h('h2', {}, 'Jobs that failed, by cause'),
    (jobs.causes || []).length ? jobs.causes.map(c => h('div', { class: 'card' },
      h('div', {}, h('strong', {}, `${(c.jobs || []).length} failed: `), c.why, c.passed ? ' It has plausibly passed.' : null),
      (c.jobs || []).map(id => failed.find(j => j.id === id)).filter(Boolean).map(j => h('div', { class: 'row' },
        h('span', {}, words(' · ', '#' + j.id, j.kind, j.dismissed ? 'dismissed' : j.state)),
        h('span', { class: 'buttons' },
          h('button', { class: c.passed ? 'primary' : null, onclick: () => act(() => api('POST', `/api/jobs/${j.id}/retry`), 'Retrying') }, 'Retry'),
          j.dismissed ? null : h('button', { onclick: () => act(() => api('POST', `/api/jobs/${j.id}/dismiss`), 'Dismissed') }, 'Dismiss'))))))
      : h('p', { class: 'muted' }, 'None.'),
    h('h2', {}, 'Approvals'),
    (appr || []).length ? h('ol', { class: 'timeline' }, appr.map(a => h('li', {},
      h('span', { class: 'what' }, (a.approval || {}).state || ''),
      h('span', {}, a.tool),
      h('span', { class: 'detail muted' }, (a.envelope || {}).summary || ''))))
      : h('p', { class: 'muted' }, 'None.'),
    fetched ? webReads(fetched.fetches || []) : null);
}

// webReads lists what agents fetched from the web (web.fetches): who, which host, why and
// what came of it; a refused place is marked, with the guard's sentence.
function webReads(rows) {
  return [h('h2', {}, 'Web reads'),
    rows.length ? h('ol', { class: 'timeline', 'data-list': 'web-fetches' }, rows.map(f => h('li', { 'data-outcome': f.outcome },
      h('time', { datetime: f.at }, when(f.at)),
      h('span', { class: 'what' }, words(' · ', f.agent, f.tool, f.host)),
      h('span', { class: f.outcome === 'ok' ? 'detail muted' : 'detail' }, words(' · ', f.outcome === 'ok' ? null : f.outcome, f.purpose, f.reason)))))
      : h('p', { class: 'muted' }, 'No agent has read the web yet.')];
}

// --- Settings → Developer ---
async function drawDeveloper() {
  const paint = painter();
  const d = await api('GET', '/api/developer');
  const workspaces = d.workspaces || [], processes = d.processes || [], allowed = d.allowed || [], tailnet = d.tailnet || {};
  paint(
    settingsNav('developer'),
    h('h2', {}, 'Settings → Developer'),
    h('p', { class: 'sentence' }, d.sentence),
    h('h2', {}, 'Workspaces'),
    workspaces.length ? h('div', { class: 'scroll' }, h('table', {}, workspaces.map(w => h('tr', {}, h('td', {}, w.agent), h('td', {}, w.directory),
      h('td', {}, h('select', { 'aria-label': words(' ', 'mode of', w.agent), onchange: ev => act(() => api('POST', `/api/developer/agents/${encodeURIComponent(w.agent)}/mode`, { mode: ev.target.value }), 'Mode set') },
        ['ask', 'edit', 'run'].map(m => h('option', { value: m, selected: m === w.mode }, m))))))))
      : h('p', { class: 'muted' }, 'No agent has a workspace.'),
    h('h2', {}, 'Running processes'),
    processes.length ? h('div', { class: 'scroll' }, h('table', {}, processes.map(p => h('tr', {}, h('td', {}, p.agent), h('td', {}, p.name), h('td', {}, words(' ', p.argv || [])), h('td', {}, p.port || ''),
      h('td', {}, p.port ? toolData({ renderer: 'preview', src: `/preview/developer/${p.name}/`, title: p.name }) : null, ' ',
        h('button', { onclick: () => act(() => api('POST', `/api/developer/processes/${encodeURIComponent(p.agent)}/${encodeURIComponent(p.name)}/stop`), words(' ', 'Stopped', p.name)) }, 'Stop'))))),
      h('button', { class: 'danger', onclick: () => act(() => api('POST', '/api/developer/processes/stop-all'), 'Stopped all') }, 'Stop all processes'))
      : h('p', { class: 'muted' }, 'No process is running.'),
    h('h2', {}, 'On your tailnet'),
    h('label', {},
      h('input', { type: 'checkbox', 'aria-label': 'Tailscale port per process', checked: tailnet.previews,
        onchange: ev => act(() => api('POST', '/api/developer/tailnet', { previews: ev.target.checked }), ev.target.checked ? 'Processes get tailnet ports' : 'Tailnet ports closed') }),
      ' Give each started process its port on the tailnet'),
    h('p', { class: 'sentence' }, tailnet.sentence),
    tailnet.node ? null : h('p', { class: 'muted' }, 'buddi runs without the tailnet now: the switch takes effect once it starts with `buddi serve --tailnet` (or `buddi tailnet on`).'),
    h('h2', {}, 'Commands you allowed'),
    allowed.length ? h('div', { class: 'scroll' }, h('table', {}, allowed.map(c => h('tr', {}, h('td', {}, c.agent), h('td', {}, c.workspace), h('td', {}, h('code', {}, c.command)), h('td', {}, c.prefix ? 'prefix' : 'exact'),
      h('td', {}, h('button', { onclick: () => act(() => api('POST', `/api/developer/allowed/${c.id}/forget`), 'Forgotten') }, 'Forget'))))))
      : h('p', { class: 'muted' }, 'None yet: an “always” on a card adds one.'));
}

// --- routing and refresh ---
// generation counts the pages asked for: a drawing that began before the latest one paints
// nothing, so a slow Home cannot cover the Chat the owner has moved to since.
let generation = 0;
function painter() {
  const mine = generation;
  // paint draws the page with dom.js's fill (lists as their items, absent parts as nothing)
  // and says whether it did.
  return (...nodes) => {
    if (mine !== generation) return false;
    fill(main, nodes);
    return true;
  };
}

// more is the owner pages of pages.js: Settings → Accounts and models, the first run, Missions, Health.
const more = pages({ api, painter, act, say, when });
// watched is watch.js's Reminders and Sentinels and alerts; phoned is phone.js's Settings →
// Telegram and Settings → Tailnet. Both take the same helpers as pages.js.
const watched = watch({ api, painter, act, say, when });
const phoned = phone({ api, painter, act, say, when });
const filed = files({ api, painter, act, say, when }); // the Files page
// remembered is memory.js's Memory page.
const remembered = memory({ api, painter, act, say, when });
// mailed is email.js's Email page; openChat takes a triage run's link to its conversation.
const mailed = email({ api, painter, act, say, when, openChat });

async function refresh() {
  const mine = ++generation;
  const [, page, arg] = (location.hash || '#/home').split('/');
  let agent = '';
  try { agent = page === 'chat' ? decodeURIComponent(arg || '') : ''; } catch { /* a malformed address: no agent */ }
  current = { page: page || 'home', agent };
  for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', a.dataset.page === current.page);
  await drawRail();
  // A page asked for while the rail loaded has its own drawing: this one stops here, since a
  // page drawn from now on would take the newer generation and cover it.
  if (mine !== generation) return;
  try {
    if (current.page === 'chat') await drawChat(current.agent);
    else if (current.page === 'activity') await drawActivity();
    else if (current.page === 'settings' && arg === 'accounts') await more.settings();
    else if (current.page === 'settings' && arg === 'telegram') await phoned.telegram();
    else if (current.page === 'settings' && arg === 'tailnet') await phoned.tailnet();
    else if (current.page === 'reminders') await watched.reminders();
    else if (current.page === 'alerts') await watched.alerts();
    else if (current.page === 'files') await filed.page(arg);
    else if (current.page === 'memory') await remembered.page();
    else if (current.page === 'email') await mailed.page();
    else if (current.page === 'settings') await drawDeveloper();
    else if (current.page === 'missions') await more.missions();
    else if (current.page === 'health') await more.health();
    else if (!(await more.firstRun()) && mine === generation) await drawHome();
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
