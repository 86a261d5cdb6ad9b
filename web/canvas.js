// The canvas: the panel beside the chat that draws what an answer cannot say (seed 004, "The
// canvas and view descriptors"). The server sends each result's view already extracted
// (core/views): a renderer from a closed set and its data. This module only draws shapes —
// tables, records, bars, series, documents, diffs, terminal text, images, links, envelopes
// and any JSON — with dom.js's h(), never markup. It names no domain.

import { h, fill, words } from '/dom.js';

// How many tabs show before the rest go behind the overflow.
const shown = 4;

// The renderers this page draws; anything else is drawn as structured.
const known = new Set(['timeseries', 'table', 'bars', 'keyvalue', 'document', 'diff', 'terminal', 'image', 'preview', 'envelope', 'structured']);

// What stays selected across redraws of the same conversation.
const kept = { conv: '', selected: '' };

// canvasPanel returns an empty panel for the conversation conv: add(view, key) puts a tab
// in it (a later view with the same key replaces the tab, as a result replaces the envelope
// of its call), and el is the panel, hidden while it has no tab.
export function canvasPanel(conv) {
  if (kept.conv !== conv) { kept.conv = conv; kept.selected = ''; }
  const tabs = []; // {key, view}
  const bar = h('div', { class: 'canvas-tabs', role: 'tablist' });
  const body = h('div', { class: 'canvas-body', role: 'tabpanel' });
  const el = h('aside', { class: 'canvas empty', 'aria-label': 'Canvas' }, bar, body);

  function draw() {
    el.classList.toggle('empty', tabs.length === 0);
    if (!tabs.length) { fill(bar); fill(body); return; }
    const current = tabs.find(t => t.key === kept.selected) || tabs[tabs.length - 1];
    kept.selected = current.key;
    const visible = tabs.slice(-shown);
    const hidden = tabs.slice(0, -shown);
    if (!visible.includes(current)) visible[0] = current; // the selected tab always shows
    const tab = t => h('button', {
      type: 'button', role: 'tab', class: words(' ', 'canvas-tab', t === current ? 'current' : '', t.view.failed ? 'failed' : ''),
      'aria-selected': t === current ? 'true' : 'false', 'data-tab': t.key, title: t.view.tool || null,
      onclick: () => { kept.selected = t.key; draw(); },
    }, label(t.view));
    const more = hidden.filter(t => !visible.includes(t));
    let overflow = null;
    if (more.length) {
      const pick = h('select', { class: 'canvas-more', 'aria-label': 'More results', onchange: ev => { kept.selected = ev.target.value; draw(); } },
        h('option', { value: '' }, words(' ', '+' + more.length, 'more')),
        more.map(t => h('option', { value: t.key }, words(' ', t.view.failed ? '✗' : '', label(t.view)))));
      overflow = h('span', { class: 'canvas-overflow' }, pick, more.some(t => t.view.failed) ? h('span', { class: 'dot failed', title: 'A hidden result failed' }) : null);
    }
    fill(bar, visible.map(tab), overflow);
    fill(body, render(current.view));
    body.setAttribute('data-renderer', renderer(current.view));
  }

  return {
    el,
    add(view, key) {
      if (!view || typeof view !== 'object') return;
      key = String(view.of || key || tabs.length);
      const at = tabs.findIndex(t => t.key === key);
      if (at >= 0) tabs.splice(at, 1);
      tabs.push({ key, view });
      kept.selected = key;
      draw();
    },
  };
}

// label is a tab's name: the view's title, else its tool.
function label(v) {
  const s = String(v.title || v.tool || renderer(v));
  return s.length > 32 ? s.slice(0, 31) + '…' : s;
}

function renderer(v) { return known.has(v.renderer) ? v.renderer : 'structured'; }

// render draws one view.
function render(v) {
  const r = renderer(v);
  const parts = [];
  if (v.title) parts.push(h('h3', { class: 'canvas-title' }, v.title));
  if (v.failed) parts.push(h('p', { class: 'canvas-failed' }, words(' ', v.tool || 'The call', 'failed.')));
  parts.push(renderers[r](v));
  if (v.truncated) parts.push(h('p', { class: 'muted' }, 'Only part of it is shown.'));
  return parts;
}

const renderers = {
  table(v) {
    const cols = v.columns || [];
    return h('div', { class: 'scroll' }, h('table', { class: 'canvas-table' },
      h('thead', {}, h('tr', {}, cols.map(c => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, (v.rows || []).map(row => h('tr', {}, cols.map((_, i) => h('td', { class: numeric(row[i]) ? 'num' : null }, row[i] ?? '')))))));
  },
  keyvalue(v) {
    return h('table', { class: 'canvas-record' }, h('tbody', {}, (v.pairs || []).map(p =>
      h('tr', {}, h('th', { scope: 'row' }, p.key), h('td', { class: p.number ? 'num' : null }, p.value)))));
  },
  bars(v) { return meters(v); },
  timeseries(v) { return meters(v); },
  document(v) { return h('div', { class: 'canvas-document' }, v.text || ''); },
  terminal(v) { return h('pre', { class: 'canvas-terminal' }, v.text || ''); },
  diff(v) {
    return h('pre', { class: 'canvas-diff' }, (v.text || '').split('\n').map(line => h('span', { class: lineClass(line) }, line || ' ')));
  },
  image(v) {
    return /^[0-9a-f-]{36}$/.test(v.artifact || '') ? h('img', { class: 'artifact', src: '/api/artifacts/' + v.artifact, alt: v.title || 'image' }) : null;
  },
  preview(v) {
    const safe = /^https?:\/\//i.test(v.url || '');
    return h('div', { class: 'canvas-link' }, safe ? h('a', { href: v.url, target: '_blank', rel: 'noopener noreferrer' }, v.url) : v.url, v.text ? h('p', {}, v.text) : null);
  },
  envelope(v) {
    return h('div', { class: 'canvas-envelope' }, h('p', { class: 'muted' }, 'Waiting for your approval.'), v.text ? h('pre', {}, v.text) : null);
  },
  structured(v) {
    let text = '';
    try { text = JSON.stringify(v.value, null, 2) ?? ''; } catch { text = String(v.value); }
    return h('pre', { class: 'canvas-structured' }, text);
  },
};

// meters draws labelled numbers as bars, each number printed as it was written.
function meters(v) {
  const pts = v.points || [];
  const nums = pts.map(p => Math.abs(Number(p.value)) || 0);
  const top = Math.max(1, ...nums);
  return h('table', { class: 'canvas-bars' }, h('tbody', {}, pts.map((p, i) => h('tr', {},
    h('th', { scope: 'row' }, p.label),
    h('td', {}, h('meter', { min: 0, max: top, value: nums[i] })),
    h('td', { class: 'num' }, p.value)))));
}

// lineClass marks a diff's line: added, removed, a hunk's header or a file's.
function lineClass(line) {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  return 'diff-ctx';
}

function numeric(s) { return typeof s === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(s); }
