// The dashboard's Settings → Telegram and Settings → Tailnet pages. app.js's router dispatches
// here with the helpers pages.js gets.

import { h, words } from '/dom.js';
import { settingsNav } from '/nav.js';

// phone builds the pages over the app's helpers: api(method, path, body), painter(), act(fn,
// doneText), say(text) and when(iso).
export function phone({ api, painter, act, say, when }) {
  // pairing is the code on show, kept across redraws until it expires or a phone pairs:
  // {code, link, qr_svg, expires_at, sentence, before (the device ids when it was made)}.
  let pairing = null;

  // pairingPanel draws the code: its QR code (the server's SVG, as an image), the link, the code.
  function pairingPanel(p) {
    return h('section', { class: 'card pairing' },
      h('img', { class: 'qr', alt: 'QR code of the pairing link', src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(p.qr_svg) }),
      h('div', { class: 'pairing-text' },
        h('a', { class: 'link', href: p.link, target: '_blank', rel: 'noopener' }, p.link),
        h('p', {}, 'Code ', h('code', {}, p.code), ', until ' + when(p.expires_at) + '.'),
        h('p', { class: 'muted' }, p.sentence)));
  }

  // deviceCard is one paired device with its unpair button.
  function deviceCard(d) {
    return h('div', { class: 'card device', 'data-device': d.id },
      h('div', { class: 'row' }, h('strong', {}, d.name || words(' ', 'Telegram user', d.user_id)),
        h('span', { class: words(' ', 'pill', d.sealed ? 'enabled' : 'refused') }, d.sealed ? 'paired' : 'not sealed: pairs no one')),
      h('div', { class: 'muted' }, words(' · ', words(' ', 'user', d.user_id), words(' ', 'chat', d.chat_id), words(' ', 'paired', when(d.paired_at)))),
      d.sealed ? null : h('p', { class: 'sentence bad' }, 'An earlier buddi paired it, or it was written into the database: unpair it, and pair your phone again.'),
      h('div', { class: 'buttons' },
        h('button', { class: 'danger unpair', onclick: () => act(() => api('POST', `/api/telegram/devices/${d.id}/unpair`), words(' ', 'Unpaired', d.name || 'the device')) }, 'Unpair')));
  }

  async function telegram() {
    const paint = painter();
    const t = await api('GET', '/api/telegram');
    const devices = t.devices || [];
    if (pairing && (new Date(pairing.expires_at) <= new Date() || devices.some(d => !pairing.before.includes(d.id)))) {
      if (new Date(pairing.expires_at) > new Date()) say('Your phone is paired.');
      pairing = null;
    }
    const state = !t.set_up ? ['not set up', 'disabled'] : t.down ? ['refused', 'refused'] : t.connected ? ['connected', 'enabled'] : ['not connected', 'disabled'];
    paint(
      settingsNav('telegram'),
      h('h2', {}, 'Settings → Telegram'),
      h('div', { class: 'card bot' },
        h('div', { class: 'row' }, h('strong', {}, t.bot ? '@' + t.bot : 'No bot'), h('span', { class: words(' ', 'pill', state[1]) }, state[0])),
        h('p', { class: words(' ', 'sentence', t.fix ? 'bad' : '') }, t.sentence),
        t.fix ? h('p', { class: 'fix' }, t.fix) : null,
        t.set_up ? null : h('p', { class: 'muted' }, 'The bot’s token is set where buddi runs, with `buddi telegram setup`: it never goes through this page.')),
      h('h2', {}, 'Pair a phone'),
      t.set_up
        ? [h('p', { class: 'muted' }, 'A code works once and for ten minutes. Scan it with the phone’s camera, or open the link on the phone; Telegram opens the bot and sends the code.'),
          h('div', { class: 'buttons' }, h('button', { class: 'primary pair', onclick: async ev => {
            ev.target.disabled = true;
            try {
              const p = await api('POST', '/api/telegram/pair');
              pairing = { ...p, before: devices.map(d => d.id) };
              say('Scan the code with your phone');
            } catch (e) { say(e.message); }
            telegram();
          } }, pairing ? 'Make a new code' : 'Pair a phone')),
          pairing ? pairingPanel(pairing) : null]
        : h('p', { class: 'muted' }, 'Pairing needs a bot: set one up first.'),
      h('h2', {}, 'Paired devices'),
      devices.length ? devices.map(deviceCard) : h('p', { class: 'muted' }, 'No phone is paired.'));
  }

  // line is one labelled fact of the Tailnet page.
  const line = (label, ...value) => h('div', { class: 'row' }, h('span', { class: 'muted' }, label), h('span', { class: 'value' }, value));

  // toggle is a switch that posts {on} to path and says the server's sentence.
  function toggle(label, cls, checked, path) {
    return h('label', { class: 'switch' },
      h('input', { type: 'checkbox', class: cls, checked, 'aria-label': label, onchange: ev => act(async () => {
        const r = await api('POST', path, { on: ev.target.checked });
        say(r.sentence);
      }) }), ' ', label);
  }

  async function tailnet() {
    const paint = painter();
    const t = await api('GET', '/api/tailnet');
    const n = t.node;
    const ownerForm = h('form', { class: 'buttons', 'data-form': 'owner', onsubmit: ev => {
      ev.preventDefault();
      const login = ownerForm.querySelector('[name=login]').value.trim();
      act(async () => { const r = await api('POST', '/api/tailnet/owner', { login }); say(r.sentence); });
    } },
    h('input', { name: 'login', 'aria-label': 'your tailnet login', placeholder: 'you@example.com', value: t.owner || t.refused || '', required: true, autocomplete: 'off' }),
    h('button', { type: 'submit' }, t.owner ? 'Change' : 'Set'));
    paint(
      settingsNav('tailnet'),
      h('h2', {}, 'Settings → Tailnet'),
      h('p', { class: 'sentence' }, t.sentence),
      t.problem ? h('p', { class: 'sentence bad problem' }, t.problem) : null,
      t.fix ? h('p', { class: 'fix' }, t.fix) : null,
      h('div', { class: 'card tailnet' },
        h('div', { class: 'row' }, h('strong', {}, 'Tailnet'), h('span', { class: words(' ', 'pill', t.enabled ? 'enabled' : 'disabled') }, t.enabled ? 'on' : 'off')),
        toggle('Put buddi on my tailnet (from the next start of buddi serve)', 'enabled', t.enabled, '/api/tailnet/enabled'),
        n ? [
          line('Node', h('span', { class: words(' ', 'pill', n.state === 'running' ? 'enabled' : 'disabled') }, n.state), ' ', n.dns_name || n.hostname),
          (n.ips || []).length ? line('Addresses', words(', ', n.ips)) : null,
          n.url ? line('Dashboard', h('a', { href: n.url }, n.url)) : null,
          n.login_url ? line('Log the node in', h('a', { href: n.login_url, target: '_blank', rel: 'noopener' }, n.login_url)) : null,
          (n.ports || []).map(p => line(words(' ', 'Port', p.port), words(' ', 'process', p.process)))]
          : line('Node', t.hostname ? words(' ', 'not running in this buddi; it asks for the name', t.hostname) : 'not running in this buddi')),
      h('div', { class: 'card owner' },
        h('div', { class: 'row' }, h('strong', {}, 'Owner'), h('span', { class: 'value owner-login' }, t.owner || 'not set')),
        h('p', { class: 'muted' }, 'On the tailnet, buddi answers this login and no one else.'),
        t.refused ? h('p', { class: 'sentence bad' }, words(' ', t.refused, 'is stored, but not sealed by this buddi: it is nobody’s.')) : null,
        ownerForm),
      h('div', { class: 'card authkey' },
        h('div', { class: 'row' }, h('strong', {}, 'Auth key'), h('span', { class: words(' ', 'pill', t.auth_key ? 'enabled' : 'disabled') }, t.auth_key ? words(' ', 'stored in', t.auth_key) : 'none stored')),
        h('p', { class: 'muted' }, t.auth_key
          ? 'The node logs in with it at its next start; its value is never shown.'
          : 'Without one the node asks for a login in the browser. Store one with `buddi tailnet authkey` (read from standard input, never on this page).')),
      h('div', { class: 'card previews' },
        h('div', { class: 'row' }, h('strong', {}, 'Previews'), h('span', { class: words(' ', 'pill', t.previews ? 'enabled' : 'disabled') }, t.previews ? 'on' : 'off')),
        toggle('Give each developer process its port on the tailnet', 'previews', t.previews, '/api/tailnet/previews'),
        h('p', { class: 'muted' }, 'Whatever such a process serves is then reachable from every device signed in as you.')));
  }
  return { telegram, tailnet };
}
