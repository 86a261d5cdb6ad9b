// The dashboard's Memory page: what each agent keeps. Notes are listed with where each came
// from (agent, conversation, run, when, scope), deleted and expired ones marked and kept for
// the audit; preferences with every revision. The owner corrects a preference (a new
// revision) and deletes a note (softly). app.js's router dispatches here with the helpers
// pages.js gets.

import { h, words } from '/dom.js';

// memory builds the page over the app's helpers: api(method, path, body), painter(), act(fn,
// doneText), say(text) and when(iso).
export function memory({ api, painter, act, say, when }) {
  const enc = encodeURIComponent;
  let agent = ''; // the agent whose notes are shown; '' is every agent

  // who names an agent by its handle ("@concierge", as the server gives it), else its id.
  const who = (id, handles) => handles[id] || id;

  function noteCard(n, handles) {
    const live = n.state === 'kept';
    return h('div', { class: words(' ', 'card memory-note', n.state), 'data-note': n.id },
      h('div', { class: 'row' },
        h('strong', {}, who(n.agent, handles)),
        h('span', {}, h('span', { class: words(' ', 'pill', live ? 'enabled' : 'disabled') }, n.state), ' ', h('span', { class: 'pill' }, n.scope))),
      h('p', { class: 'note value' }, n.text),
      h('div', { class: 'muted provenance' }, words(' · ', 'written ' + when(n.created_at),
        n.conversation_id ? 'conversation ' + n.conversation_id : 'no conversation',
        n.run_id ? 'run ' + n.run_id : '',
        n.expires_at ? (n.state === 'expired' ? 'expired ' : 'expires ') + when(n.expires_at) : '',
        'note ' + n.id)),
      n.deleted_at ? h('div', { class: 'muted deleted' }, words(' ', 'Deleted by', n.deleted_by === 'owner' ? 'you' : who(n.deleted_by, handles), when(n.deleted_at) + '; no agent recalls it.')) : null,
      n.deleted_at ? null : h('div', { class: 'buttons' },
        h('button', { class: 'danger delete', onclick: () => act(async () => say((await api('POST', `/api/memory/notes/${n.id}/delete`)).sentence)) }, 'Delete')));
  }

  function revisionLine(r, handles) {
    return h('li', { class: 'revision', 'data-revision': r.revision },
      words(' ', '“' + r.value + '”', '— revision', r.revision, 'by', r.author === 'owner' ? 'you' : who(r.author, handles), when(r.created_at),
        r.superseded_at ? '(superseded ' + when(r.superseded_at) + ')' : '(current)'));
  }

  // correctForm is a value box and a button that writes a new revision of key (or, with
  // key '', a new preference with its own key box).
  function correctForm(key, value) {
    const keyBox = key ? null : h('input', { name: 'key', placeholder: 'what it is about, e.g. reply language', 'aria-label': 'preference' });
    const valueBox = h('input', { name: 'value', value, placeholder: 'what you prefer', 'aria-label': key ? words(' ', 'correct', key) : 'value' });
    return h('form', { class: 'buttons correct', onsubmit: ev => {
      ev.preventDefault();
      act(async () => say((await api('POST', '/api/memory/preferences', { key: key || keyBox.value, value: valueBox.value })).sentence));
    } }, keyBox, valueBox, h('button', { type: 'submit' }, key ? 'Correct' : 'Add'));
  }

  function preferenceCard(p, handles) {
    const c = p.current;
    return h('div', { class: 'card preference', 'data-key': p.key },
      h('div', { class: 'row' }, h('strong', {}, p.key), h('span', { class: 'value' }, c.value)),
      h('div', { class: 'muted' }, words(' ', 'revision', c.revision, 'by', c.author === 'owner' ? 'you' : who(c.author, handles), when(c.created_at))),
      correctForm(p.key, c.value),
      p.revisions.length > 1 ? h('details', {}, h('summary', {}, words(' ', 'All', p.revisions.length, 'revisions')),
        h('ul', { class: 'revisions' }, p.revisions.map(r => revisionLine(r, handles)))) : null);
  }

  async function page() {
    const paint = painter();
    const out = await api('GET', '/api/memory' + (agent ? '?agent=' + enc(agent) : ''));
    const handles = out.handles || {}, notes = out.notes || [], prefs = out.preferences || [];
    const agents = [...new Set([...Object.keys(handles), ...notes.map(n => n.agent), agent].filter(Boolean))].sort();
    paint(
      h('h2', {}, 'Memory'),
      h('p', { class: 'sentence' }, 'What your agents keep: your preferences, with every revision, and the notes agents wrote down, with where each came from. Memory informs and never grants: nothing here is permission or an approval.'),
      h('h2', {}, 'Preferences'),
      prefs.length ? prefs.map(p => preferenceCard(p, handles))
        : h('div', { class: 'card empty' }, h('p', {}, 'No preference is recorded yet.'),
          h('p', { class: 'muted' }, 'Tell an agent how you like things (“answer me in English”), or add one here.')),
      h('div', { class: 'card new-preference' }, h('strong', {}, 'Add a preference'), correctForm('', '')),
      h('h2', {}, 'Notes'),
      h('div', { class: 'buttons' }, h('label', {}, 'Agent ',
        h('select', { 'aria-label': 'agent', class: 'memory-agent', onchange: ev => { agent = ev.target.value; act(() => {}); } },
          h('option', { value: '', selected: agent === '' }, 'every agent'),
          agents.map(a => h('option', { value: a, selected: a === agent }, who(a, handles)))))),
      notes.length ? notes.map(n => noteCard(n, handles))
        : h('div', { class: 'card empty' }, h('p', {}, agent ? words(' ', who(agent, handles), 'has written down no note.') : 'No agent has written down a note yet.'),
          h('p', { class: 'muted' }, 'An agent with the memory tools writes a note with memory.remember and finds it again with memory.recall; each is listed here.')));
  }

  return { page };
}
