// The dashboard's watch pages: Reminders, and Sentinels and alerts. app.js's router dispatches
// here with the helpers pages.js gets. Times come from the server in the owner's words and
// time zone ("tomorrow at 09:00"), so the page and the phone say the same.

import { h, words } from '/dom.js';

// watch builds the pages over the app's helpers: api(method, path, body), painter(), act(fn,
// doneText), say(text) and when(iso).
export function watch({ api, painter, act, say, when }) {
  const enc = encodeURIComponent;
  // confirming is the finding whose Mute asks for confirmation ("sentinel\nkey"), kept across
  // the redraws the live channel brings.
  let confirming = '';

  const plural = (n, one, many) => words(' ', n, n === 1 ? one : many);

  // --- Reminders ---
  function reminderCard(r) {
    const pending = r.state === 'pending';
    return h('div', { class: words(' ', 'card reminder', r.state), 'data-reminder': r.id },
      h('div', { class: 'row' }, h('strong', {}, r.when), h('span', { class: words(' ', 'pill', pending ? 'enabled' : 'disabled') }, r.state)),
      h('p', { class: 'note' }, r.note),
      h('div', { class: 'muted' }, words(' · ', r.fires, words(' ', 'set by', r.agent_handle || r.agent), words(' ', 'reminder', r.id))),
      pending ? h('div', { class: 'buttons' },
        h('button', { class: 'danger cancel', onclick: () => act(() => api('POST', `/api/reminders/${r.id}/cancel`), words(' ', 'Cancelled reminder', r.id)) }, 'Cancel')) : null);
  }

  async function reminders() {
    const paint = painter();
    const out = await api('GET', '/api/reminders');
    const list = out.reminders || [], l = out.limits || {};
    const pending = list.filter(r => r.state === 'pending'), done = list.filter(r => r.state !== 'pending');
    paint(
      h('h2', {}, 'Reminders'),
      pending.length
        ? h('p', { class: 'sentence' }, words(' ', plural(pending.length, 'reminder is', 'reminders are'), 'pending. Times are in', out.zone + '.'))
        : h('div', { class: 'card empty' },
          h('p', {}, 'No reminder is pending.'),
          h('p', { class: 'muted' }, 'An agent sets a reminder when it promises to look at something later: ask in Chat, for example “remind me at five to check the build passed”. Each pending one is listed here with when it fires, and can be cancelled.')),
      pending.map(reminderCard),
      done.length ? [h('h2', {}, 'Earlier'), done.map(reminderCard)] : null,
      h('p', { class: 'muted limits' }, words(' ', 'Limits:', plural(l.per_agent, 'pending reminder', 'pending reminders'), 'per agent,', l.total, 'in all, at least',
        l.min_lead, 'ahead and at most', l.horizon + '; a reminder missed by more than', l.grace, 'expires instead of firing late (BUDDI_REMINDER_*).')));
  }

  // --- Sentinels and alerts ---
  const stateText = { on: 'on', off: 'off', failing: 'last check failed', removed: 'no longer part of buddi' };

  // muteConfirm is the confirmation a Mute asks for: the sentence, and mute the subject, the
  // whole kind, or keep telling.
  function muteConfirm(f) {
    const done = r => { confirming = ''; say(r.sentence); };
    const mute = subject => act(async () => done(await api('POST', '/api/mutes', { kind: f.kind, subject })));
    return h('div', { class: 'confirm', role: 'group', 'aria-label': 'confirm the mute' },
      h('p', {}, f.subject
        ? words(' ', 'Never tell you about', f.kind, 'for', f.subject, 'again? It is still recorded and listed here, and you can unmute it below.')
        : words(' ', 'Never tell you about', f.kind, 'again? It is still recorded and listed here, and you can unmute it below.')),
      h('div', { class: 'buttons' },
        f.subject ? h('button', { class: 'danger confirm-mute', onclick: () => mute(f.subject) }, words(' ', 'Mute', f.subject)) : null,
        h('button', { class: words(' ', 'danger', f.subject ? 'confirm-mute-kind' : 'confirm-mute'), onclick: () => mute('') }, f.subject ? words(' ', 'Mute every', f.kind) : 'Mute'),
        h('button', { class: 'keep-telling', onclick: () => { confirming = ''; act(async () => {}); } }, 'Keep telling me')));
  }

  function findingItem(s, f) {
    const id = s.id + '\n' + f.key;
    const snooze = choice => act(async () => say((await api('POST', `/api/sentinels/${enc(s.id)}/snooze`, { key: f.key, snooze: choice })).sentence));
    return h('li', { class: words(' ', 'finding', f.severity, f.silenced ? 'silenced' : null), 'data-finding': f.key },
      h('div', { class: 'row' }, h('span', { class: 'line' }, f.owner_line), h('span', { class: words(' ', 'pill', f.severity === 'urgent' ? 'urgent' : null) }, f.severity)),
      h('div', { class: 'muted' }, words(' · ', words(' ', 'seen', f.seen), f.kind ? words(' ', f.kind, f.subject) : '', f.key)),
      f.silenced ? h('p', { class: 'sentence silenced' }, f.silenced) : null,
      h('div', { class: 'buttons' },
        h('button', { class: 'not-now', title: 'Silent for a week', onclick: () => snooze('not-now') }, 'Not now (a week)'),
        h('button', { class: 'not-needed', title: 'Silent until the sentinel no longer finds it', onclick: () => snooze('not-needed') }, 'Not needed (until it resolves)'),
        f.kind && !f.muted ? h('button', { class: 'danger mute', onclick: () => { confirming = id; act(async () => {}); } }, 'Mute…') : null),
      confirming === id && f.kind && !f.muted ? muteConfirm(f) : null);
  }

  function sentinelCard(s) {
    const findings = s.findings || [];
    const switchable = s.state !== 'removed';
    return h('div', { class: words(' ', 'card sentinel', s.state), 'data-sentinel': s.id },
      h('div', { class: 'row' }, h('strong', {}, s.id), h('span', { class: words(' ', 'pill', s.state === 'on' ? 'enabled' : 'disabled') }, stateText[s.state] || s.state)),
      s.description ? h('div', {}, s.description) : null,
      h('div', { class: 'muted' }, words(' · ', words(' ', 'last check', s.last_check), plural(findings.length, 'open finding', 'open findings'))),
      s.last_error ? h('p', { class: 'sentence bad' }, words(' ', 'The last check failed:', s.last_error)) : null,
      findings.length ? h('ul', { class: 'plain findings' }, findings.map(f => findingItem(s, f))) : null,
      switchable ? h('div', { class: 'buttons' }, s.enabled
        ? h('button', { class: 'switch-off', onclick: () => act(() => api('POST', `/api/sentinels/${enc(s.id)}/off`), words(' ', s.id, 'is off')) }, 'Switch off')
        : h('button', { class: 'switch-on', onclick: () => act(() => api('POST', `/api/sentinels/${enc(s.id)}/on`), words(' ', s.id, 'is on')) }, 'Switch on')) : null);
  }

  async function alerts() {
    const paint = painter();
    const out = await api('GET', '/api/sentinels');
    const list = out.sentinels || [], mutes = out.mutes || [];
    const open = list.flatMap(s => s.findings || []);
    const loud = open.filter(f => !f.silenced);
    paint(
      h('h2', {}, 'Sentinels and alerts'),
      open.length
        ? h('p', { class: 'sentence' }, words(' ', plural(open.length, 'finding is', 'findings are'), 'open,', loud.length ? words(' ', loud.length, 'of them not silenced.') : 'all of them silenced.', 'Times are in', out.zone + '.'))
        : h('div', { class: 'card empty' },
          h('p', {}, 'Nothing open.'),
          h('p', { class: 'muted' }, 'Sentinels watch your plugins’ data without a model: when one notices something, failing tests in an agent’s workspace for example, the finding appears here to snooze or mute. Urgent findings wake an agent to check; the rest wait for the weekly digest.')),
      list.length ? list.map(sentinelCard) : h('p', { class: 'muted' }, 'No sentinel is part of this buddi.'),
      h('h2', {}, 'Muted'),
      mutes.length
        ? h('ul', { class: 'plain mutes' }, mutes.map(m => h('li', { 'data-mute': m.id },
          h('div', { class: 'row' }, h('span', {}, m.subject ? words(' ', m.kind, 'for', m.subject) : words(' ', 'every', m.kind)),
            h('button', { class: 'unmute', onclick: () => act(() => api('POST', `/api/mutes/${m.id}/unmute`), words(' ', 'Unmuted', m.kind)) }, 'Unmute')),
          h('div', { class: 'muted' }, words(' ', 'since', when(m.created_at))))))
        : h('p', { class: 'muted' }, 'Nothing is muted. “Mute…” on a finding stops buddi telling you about its kind; it is still recorded and listed here.'));
  }

  return { reminders, alerts };
}
