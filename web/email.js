// The dashboard's Email page: each account with when it was last read and, when its last
// read failed, that sentence and the command that checks the fix; the triage of the mail
// that arrived, each message with the state of its run and a link to that run's
// conversation; and the sends waiting for the owner's approval, decided on Home. A message's
// From and Subject are text a stranger wrote: they are drawn as text with dom.js's h(), never
// as markup. app.js's router dispatches here with the helpers pages.js gets, and openChat.

import { h, words } from '/dom.js';

// triageWords says each triage state in words.
const triageWords = {
  pending: 'waiting for its triage to start',
  queued: 'triage queued',
  started: 'being triaged',
  waiting: 'waiting for your approval',
  retrying: 'triage failed; trying again',
  done: 'triaged',
  failed: 'triage failed',
};

// email builds the page over the app's helpers: api(method, path, body), painter(), act(fn,
// doneText), say(text), when(iso), and openChat(agent, conversation), which opens one
// conversation in the chat.
export function email({ api, painter, act, say, when, openChat }) {
  const enc = encodeURIComponent;

  function accountCard(a) {
    const failing = !!a.last_error;
    return h('div', { class: words(' ', 'card email-account', failing ? 'failing' : ''), 'data-account': a.name },
      h('div', { class: 'row' },
        h('strong', {}, a.name),
        h('span', { class: 'value' }, h('span', { class: 'address' }, a.address), failing ? [' ', h('span', { class: 'pill refused' }, 'last read failed')] : null)),
      h('div', { class: 'muted last-read' }, a.last_sync ? 'Last read ' + when(a.last_sync) + '.'
        : failing ? 'Never read yet.' : 'Never read yet: buddi serve reads it within a minute of starting.'),
      failing ? h('div', { class: 'sentence bad last-error', role: 'alert' },
        h('p', { class: 'value' }, words(' ', a.last_error, a.last_error_at ? '(' + when(a.last_error_at) + ')' : '')),
        h('p', { class: 'fix' }, 'Fix what it names, then check with ', h('code', {}, 'buddi email test ' + a.name), '.')) : null);
  }

  function triageRow(t) {
    const who = t.agent_handle || t.agent;
    const link = t.agent ? h('a', {
      href: '#/chat/' + enc(t.agent), class: 'open-chat',
      onclick: ev => { if (t.conversation_id && openChat) { ev.preventDefault(); openChat(t.agent, t.conversation_id); } },
    }, words(' ', 'Open the triage with', who)) : null;
    return h('div', { class: words(' ', 'card email-triage', t.state), 'data-message': t.message },
      h('div', { class: 'row' },
        h('strong', { class: 'value from' }, t.from || '(no sender)'),
        h('span', { class: words(' ', 'pill', { failed: 'refused', waiting: 'urgent', retrying: 'urgent' }[t.state] || '') }, triageWords[t.state] || t.state)),
      h('p', { class: 'value subject' }, t.subject || '(no subject)'),
      h('div', { class: 'muted' }, words(' · ', 'received ' + when(t.received), 'account ' + t.account, 'message ' + t.message)),
      link);
  }

  function draftCard(d) {
    return h('div', { class: 'card email-draft', 'data-approval': d.approval },
      h('div', { class: 'row' }, h('strong', { class: 'value' }, d.summary || d.tool), h('span', { class: 'pill' }, d.tool)),
      h('div', { class: 'muted' }, words(' · ', 'proposed ' + when(d.created_at), d.agent_handle || d.agent)),
      h('a', { href: '#/home', class: 'decide' }, 'Decide it on Home'));
  }

  async function page() {
    const paint = painter();
    const out = await api('GET', '/api/email');
    const accounts = out.accounts || [], triage = out.triage || [], drafts = out.drafts || [];
    paint(
      h('h2', {}, 'Email'),
      h('p', { class: 'sentence' }, 'Your email accounts, what arrived and how its triage went, and the sends waiting for you. Every message is text a stranger wrote: evidence for your agents, never instructions, and nothing is sent without your approval.'),
      h('h2', {}, 'Accounts'),
      accounts.length ? accounts.map(accountCard)
        : h('div', { class: 'card empty' }, h('p', {}, 'No email account yet: add one with ', h('code', {}, 'buddi email add'), '.')),
      h('h2', {}, 'Drafts awaiting your approval'),
      drafts.length ? drafts.map(draftCard)
        : h('div', { class: 'card empty drafts-empty' }, h('p', {}, 'No draft is waiting for your approval.')),
      h('h2', {}, 'Triage'),
      triage.length ? triage.map(triageRow)
        : h('div', { class: 'card empty triage-empty' }, h('p', {}, accounts.length ? 'No mail has arrived since buddi began reading your accounts.'
          : 'No mail yet: each message that arrives in an account is listed here with its triage.')));
  }

  return { page };
}
