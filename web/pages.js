// The dashboard's owner pages: Settings → Accounts and models (with the agents' accounts),
// the first run, Missions and Health. app.js's router dispatches here and passes what the
// pages share with it; everything is drawn with dom.js's h.

import { h, words } from '/dom.js';
import { settingsNav } from '/nav.js';

// pages builds the pages over the app's helpers: api(method, path, body), painter() (a paint
// function that draws the page unless the owner has moved on), act(fn, doneText) (does, says
// and redraws), say(text) and when(iso).
export function pages({ api, painter, act, say, when }) {
  const enc = encodeURIComponent;
  const tested = new Map(); // account name → the sentence of its last test, kept across redraws

  // field is a labelled input.
  const field = (label, attrs) => h('label', { class: 'field' }, h('span', {}, label), h('input', attrs));
  const choice = (label, name, options, selected) => h('label', { class: 'field' }, h('span', {}, label),
    h('select', { name }, options.map(([value, text]) => h('option', { value, selected: value === selected }, text))));
  const valuesOf = form => Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, String(v).trim()]));
  const wires = [['anthropic', 'Anthropic'], ['openai', 'OpenAI'], ['compatible', 'OpenAI-compatible (Ollama, vLLM, …)']];
  // wireOf reads a provider choice: an OpenAI-compatible server speaks the openai wire at its own base URL.
  const wireOf = v => v === 'compatible' ? 'openai' : v;

  // accountForm adds an account: its name, wire, base URL, the vault entry's name and the key.
  function accountForm(onDone) {
    const form = h('form', { class: 'card form', 'data-form': 'account', onsubmit: async ev => {
      ev.preventDefault();
      const v = valuesOf(form);
      try {
        await api('POST', '/api/accounts', { name: v.name, wire: wireOf(v.wire), base_url: v.base_url, secret_name: v.secret_name, secret: v.secret });
        form.reset();
        say(words(' ', 'Added', v.name));
        onDone();
      } catch (e) { say(e.message); }
    } },
    h('strong', {}, 'Add an account'),
    field('Name', { name: 'name', required: true, placeholder: 'work', pattern: '[a-z][a-z0-9-]*', autocomplete: 'off' }),
    choice('Provider', 'wire', wires, 'anthropic'),
    field('Base URL (empty for the provider’s own)', { name: 'base_url', type: 'url', placeholder: 'http://localhost:11434/v1' }),
    field('Vault entry for the key', { name: 'secret_name', required: true, placeholder: 'WORK_API_KEY', pattern: '[A-Z][A-Z0-9_]*', autocomplete: 'off' }),
    field('Key (stored in the vault; leave empty to use the entry’s value)', { name: 'secret', type: 'password', autocomplete: 'off' }),
    h('div', { class: 'buttons' }, h('button', { class: 'primary', type: 'submit' }, 'Add')));
    return form;
  }

  // accountCard is one account: its state, who runs on it, test, enable or disable.
  function accountCard(a, models) {
    const model = h('input', { 'aria-label': words(' ', 'model to test', a.name), placeholder: 'model', value: models[a.name] || '' });
    const result = h('p', { class: 'result', 'aria-live': 'polite' }, tested.get(a.name));
    const state = a.refused ? 'refused' : a.enabled ? 'enabled' : 'disabled';
    return h('div', { class: 'card account', 'data-account': a.name },
      h('div', { class: 'row' }, h('strong', {}, a.name), h('span', { class: words(' ', 'pill', state) }, state)),
      h('div', { class: 'muted' }, words(' · ', a.wire, a.base_url || 'the provider’s own address', words(' ', 'key in', a.secret_name))),
      a.refused ? h('p', { class: 'sentence' }, a.refused) : null,
      h('div', { class: 'muted' }, (a.agents || []).length ? words(' ', 'Used by', words(', ', a.agents)) : 'No agent runs on it.'),
      h('div', { class: 'buttons' }, model,
        h('button', { class: 'test', onclick: async ev => {
          ev.target.disabled = true;
          result.textContent = 'Testing…';
          try {
            const r = await api('POST', `/api/accounts/${enc(a.name)}/test`, { model: model.value.trim() });
            tested.set(a.name, r.sentence);
            result.textContent = r.sentence;
          } catch (e) { result.textContent = e.message; }
          ev.target.disabled = false;
        } }, 'Test'),
        a.enabled
          ? h('button', { class: 'danger', onclick: () => act(() => api('POST', `/api/accounts/${enc(a.name)}/disable`), words(' ', 'Disabled', a.name)) }, 'Disable')
          : h('button', { onclick: () => act(() => api('POST', `/api/accounts/${enc(a.name)}/enable`), words(' ', 'Enabled', a.name)) }, 'Enable')),
      result);
  }

  // agentCard is one agent: its roles, whether it can run, and its account and model to set.
  function agentCard(g, accounts) {
    const form = h('form', { class: 'buttons', onsubmit: ev => {
      ev.preventDefault();
      const v = valuesOf(form);
      act(() => api('POST', `/api/agents/${enc(g.id)}/account`, { account: v.account, model: v.model }), words(' ', g.handle, 'runs on', v.account, v.model));
    } },
    h('select', { name: 'account', 'aria-label': words(' ', 'account of', g.handle) },
      g.account ? null : h('option', { value: '' }, 'no account'),
      accounts.map(a => h('option', { value: a.name, selected: a.name === g.account }, a.name))),
    h('input', { name: 'model', 'aria-label': words(' ', 'model of', g.handle), placeholder: 'model', value: g.model || '', required: true }),
    h('button', { type: 'submit' }, 'Set'));
    return h('div', { class: 'card agent', 'data-agent-settings': g.id },
      h('div', { class: 'row' }, h('strong', {}, words(' ', g.name, g.handle)), h('span', { class: words(' ', 'pill', g.available ? 'enabled' : 'disabled') }, g.available ? 'can run' : 'cannot run')),
      h('div', { class: 'muted' }, words(' · ', (g.roles || []).length ? words(' ', 'roles:', words(', ', g.roles)) : 'no role', g.default ? 'the default agent' : '',
        words(' ', (g.tools || []).length, (g.tools || []).length === 1 ? 'tool' : 'tools'))),
      g.available ? null : h('p', { class: 'sentence' }, g.problem),
      mayDo(g),
      g.mode ? modeSelect(g) : null,
      form);
  }

  // modeSelect is the agent's mode (seed 002): plan reads only, accept-edits also changes
  // state and edits inside the workspace, auto leaves it to each tool's tier; it applies to
  // the agent's next call.
  function modeSelect(g) {
    const modes = [['plan', 'plan: reads only'], ['accept-edits', 'accept-edits: asks before commands and other writes'], ['auto', 'auto: each tool as it is marked']];
    return h('label', { class: 'field mode' }, h('span', {}, 'Mode'),
      h('select', { name: 'mode', 'data-mode': g.id, 'aria-label': words(' ', 'mode of', g.handle), onchange: ev =>
        act(() => api('POST', `/api/agents/${enc(g.id)}/mode`, { mode: ev.target.value }), words(' ', g.handle, 'is in', ev.target.value, 'mode from its next call')) },
      modes.map(([value, text]) => h('option', { value, selected: value === g.mode }, text))),
      g.mode_refused ? h('p', { class: 'sentence' }, words(' ', 'The mode on record is refused, so it is plan:', g.mode_refused)) : null);
  }

  // mayDo is what an agent may do: each tool of its grant with its tier, the ones that run
  // without asking first listed first.
  function mayDo(g) {
    const may = g.may || [];
    if (!may.length) return h('p', { class: 'muted' }, 'It may call no tool: it can only talk.');
    const auto = may.filter(t => t.tier === 'auto').length;
    return h('details', { class: 'may', 'data-may': g.id },
      h('summary', {}, words(' ', 'What it may do:', may.length, may.length === 1 ? 'tool' : 'tools', auto ? words(' ', '·', auto, 'without asking') : '')),
      h('ul', {}, may.map(t => h('li', { 'data-tool': t.name },
        h('code', {}, t.name), ' ',
        h('span', { class: words(' ', 'pill', t.tier === 'auto' ? 'enabled' : 'disabled') }, t.tier === 'auto' ? 'runs without asking' : t.tier === 'session' ? 'only in your own requests' : 'asks you first'),
        t.per_call ? h('span', { class: 'muted' }, ' (the workspace’s mode can make a call ask first)') : null,
        t.remember ? h('span', { class: 'muted' }, ' (a card can be remembered)') : null,
        t.description ? h('div', { class: 'muted' }, t.description) : null))));
  }

  // settings draws Settings → Accounts and models.
  async function settings() {
    const paint = painter();
    const [acc, ag] = await Promise.all([api('GET', '/api/accounts'), api('GET', '/api/agents/settings')]);
    const accounts = acc.accounts || [], list = ag.agents || [], roles = ag.roles || {};
    const models = {};
    for (const g of list) if (g.account && !models[g.account]) models[g.account] = g.model;
    paint(
      settingsNav('accounts'),
      h('h2', {}, 'Settings → Accounts and models'),
      accounts.length ? accounts.map(a => accountCard(a, models)) : h('p', { class: 'muted' }, 'No account yet: add one below, or start from Home.'),
      accountForm(() => settings()),
      h('h2', {}, 'Agents'),
      list.map(g => agentCard(g, accounts)),
      h('h2', {}, 'Who holds which role'),
      Object.keys(roles).length
        ? h('ul', { class: 'plain' }, Object.keys(roles).sort().map(r => h('li', {}, h('strong', {}, r), ' ', words(', ', roles[r]))))
        : h('p', { class: 'muted' }, 'No agent claims a role.'));
  }

  // --- the first run: a panel kept across redraws until the owner leaves it ---
  let welcome = null; // {form, result, answer, done}

  // firstRun draws the first-run panel and returns true when no agent can run and there is no
  // account (or the owner is in the middle of it); false lets Home draw.
  async function firstRun() {
    const paint = painter(); // taken before the reads, so a page asked for meanwhile is not covered
    if (!welcome) {
      let ag, acc;
      try { [ag, acc] = await Promise.all([api('GET', '/api/agents/settings'), api('GET', '/api/accounts')]); } catch { return false; }
      if ((ag.agents || []).some(g => g.available) || (acc.accounts || []).length) return false;
      welcome = setupPanel();
    }
    return paint(welcome.panel);
  }

  function setupPanel() {
    const result = h('p', { class: 'result', 'aria-live': 'polite' });
    const answer = h('div', { class: 'answer' });
    const done = h('button', { class: 'done', hidden: true, onclick: () => { welcome = null; act(async () => {}); } }, 'Go to Home');
    const form = h('form', { class: 'card form', 'data-form': 'setup', onsubmit: async ev => {
      ev.preventDefault();
      const v = valuesOf(form);
      const button = form.querySelector('button[type=submit]');
      button.disabled = true;
      result.textContent = 'Testing the key…';
      try {
        const r = await api('POST', '/api/setup', { wire: wireOf(v.wire), base_url: v.base_url, secret: v.secret, model: v.model });
        result.textContent = r.sentence;
        if (!r.ok) { button.disabled = false; return; }
        form.querySelector('[name=secret]').value = '';
        await firstAnswer(answer);
        done.hidden = false;
      } catch (e) { result.textContent = e.message; button.disabled = false; }
    } },
    choice('Provider', 'wire', wires, 'anthropic'),
    field('Base URL (for a local or compatible server; empty for the provider’s own)', { name: 'base_url', type: 'url', placeholder: 'http://localhost:11434/v1' }),
    field('API key (kept in buddi’s vault, never shown again)', { name: 'secret', type: 'password', required: true, autocomplete: 'off' }),
    field('Model', { name: 'model', required: true, placeholder: 'the model’s id, as the provider names it' }),
    h('div', { class: 'buttons' }, h('button', { class: 'primary', type: 'submit' }, 'Connect')));
    const panel = h('section', { class: 'first-run' },
      h('h2', {}, 'Welcome to buddi'),
      h('p', {}, 'Your agents need a model account to answer. Pick the provider, paste its key and name a model: buddi tests it, keeps the key in its vault and gives the account to every agent.'),
      form, result, answer, done);
    return { panel };
  }

  // firstAnswer asks the default agent for one line and draws its answer when it arrives.
  async function firstAnswer(into) {
    into.replaceChildren(h('p', { class: 'muted' }, 'Asking your agent to say hello…'));
    const sent = await api('POST', '/api/messages', { text: 'Say hello to me in one short line.', new: true });
    const id = sent.conversation.id, agent = sent.agent || {};
    const deadline = Date.now() + 120000;
    while (Date.now() < deadline) {
      const c = await api('GET', `/api/conversations/${enc(id)}`);
      const entries = c.transcript || [];
      if (entries.some(e => e.kind === 'marker')) { into.replaceChildren(h('p', { class: 'sentence' }, 'The agent could not answer: open the chat to see why.')); return; }
      const last = entries.filter(e => e.kind === 'assistant').flatMap(e => (e.body || {}).parts || []).filter(p => p.type === 'text' && p.text).pop();
      if (last) {
        into.replaceChildren(h('div', { class: 'card first-answer' }, h('div', { class: 'muted' }, words(' ', agent.name, agent.handle, 'says:')), h('p', {}, last.text),
          h('a', { href: '#/chat/' + enc(agent.id || '') }, 'Go on in Chat')));
        return;
      }
      await new Promise(r => setTimeout(r, 500));
    }
    into.replaceChildren(h('p', { class: 'sentence' }, 'No answer yet: open the chat to see where it is.'));
  }

  // --- Missions ---
  let missionForm = null; // kept across redraws, so a redraw does not lose what the owner types
  const runsOpen = new Set(); // the missions whose Runs are open, kept across redraws

  // whenField is the one "When" field, words or cron, with what it means shown as the owner
  // types (asked of the server a moment after the typing stops).
  function whenField() {
    const preview = h('p', { class: 'result when-preview', 'aria-live': 'polite' }, 'Say when in words, like “every weekday at 7:30”, or give cron.');
    let timer = null, asked = 0;
    const input = h('input', { name: 'when', required: true, autocomplete: 'off', placeholder: 'every weekday at 7:30',
      oninput: () => {
        clearTimeout(timer);
        const text = input.value.trim();
        if (!text) { preview.textContent = ''; return; }
        timer = setTimeout(async () => {
          const mine = ++asked;
          let line;
          try {
            const w = await api('GET', `/api/missions/when?words=${enc(text)}`);
            line = words(' ', words(' ', w.words, `(${w.zone})`), '·', w.cron, '· next:', words(', ', w.next_said || []));
            preview.classList.remove('refused');
          } catch (e) { line = e.message; preview.classList.add('refused'); }
          if (mine === asked) preview.textContent = line;
        }, 300);
      } });
    return [h('label', { class: 'field' }, h('span', {}, 'When (in words, or cron: minute hour day month weekday; in your time zone)'), input), preview];
  }

  function newMissionForm(list) {
    const agents = h('select', { name: 'agent', 'aria-label': 'agent' }, list.map(g => h('option', { value: g.id }, words(' ', g.name, g.handle))));
    const [when, preview] = whenField();
    const form = h('form', { class: 'card form', 'data-form': 'mission', onsubmit: async ev => {
      ev.preventDefault();
      const v = valuesOf(form);
      try {
        const r = await api('POST', '/api/missions', { name: v.name, agent: v.agent, when: v.when, prompt: v.prompt });
        form.reset();
        preview.textContent = '';
        say(words(' ', 'Added', v.name, '·', r.mission.words));
      } catch (e) { say(e.message); }
      missions();
    } },
    h('strong', {}, 'Add a mission'),
    field('Name', { name: 'name', required: true, placeholder: 'morning news' }),
    h('label', { class: 'field' }, h('span', {}, 'Agent'), agents),
    when, preview,
    h('label', { class: 'field' }, h('span', {}, 'What to do each time'), h('textarea', { name: 'prompt', required: true, rows: 3, placeholder: 'Tell me the news that matters to me.' })),
    h('div', { class: 'buttons' }, h('button', { class: 'primary', type: 'submit' }, 'Add')));
    return form;
  }

  // runLine is one occurrence: when, its state and why, how many instants it stood for, and
  // its report's first line.
  function runLine(o) {
    const state = words(' ', o.state, o.reason ? `(${o.reason})` : '', o.covers > 1 ? words(' ', 'for', o.covers, 'missed times') : '');
    return h('li', { class: words(' ', 'run', o.state), 'data-occurrence': o.id },
      h('span', {}, when(o.instant)), ' · ', h('span', { class: words(' ', 'pill', o.state) }, state),
      o.report ? h('div', { class: 'report' }, o.report) : null);
  }

  // runsOf is a mission's "Runs" disclosure: opened, it lists what ran when.
  function runsOf(m) {
    const list = h('ul', { class: 'plain runs-list' });
    const load = async () => {
      list.replaceChildren(h('li', { class: 'muted' }, 'Reading…'));
      try {
        const r = await api('GET', `/api/missions/${m.id}/occurrences`);
        const runs = r.occurrences || [];
        list.replaceChildren(...(runs.length ? runs.map(runLine) : [h('li', { class: 'muted' }, 'It has not run yet.')]));
      } catch (e) { list.replaceChildren(h('li', { class: 'sentence' }, e.message)); }
    };
    const d = h('details', { class: 'runs', open: runsOpen.has(m.id), ontoggle: () => {
      if (d.open) { runsOpen.add(m.id); load(); } else runsOpen.delete(m.id);
    } }, h('summary', {}, 'Runs'), list);
    return d;
  }

  function missionCard(m) {
    const post = (verb, done) => act(() => api('POST', `/api/missions/${m.id}/${verb}`), words(' ', done, m.name));
    return h('div', { class: 'card mission', 'data-mission': m.id },
      h('div', { class: 'row' }, h('strong', {}, m.name), h('span', { class: words(' ', 'pill', m.enabled ? 'enabled' : 'disabled') }, m.enabled ? 'on' : 'paused')),
      h('div', { class: 'muted', title: m.cron }, words(' · ', m.agent, words(' ', m.words || m.cron, `(${m.timezone})`), m.source === 'owner' ? '' : words(' ', 'from', m.source))),
      h('p', {}, m.prompt),
      m.still_useful ? h('div', { class: 'card notice still-useful' },
        h('p', {}, words(' ', 'Still useful?', m.quiet_runs, 'runs in a row had nothing to tell you.')),
        h('div', { class: 'buttons' },
          h('button', { class: 'primary keep', onclick: () => post('keep', 'Keeping') }, 'Keep'),
          h('button', { class: 'danger stop', onclick: () => post('stop', 'Stopped') }, 'Stop'))) : null,
      h('div', { class: 'buttons' },
        h('button', { class: 'run', onclick: () => post('run', 'Running') }, 'Run now'),
        m.enabled ? h('button', { class: 'pause', onclick: () => post('pause', 'Paused') }, 'Pause')
          : h('button', { class: 'resume', onclick: () => post('resume', 'Resumed') }, 'Resume')),
      m.ends_on ? h('div', { class: 'muted' }, words(' ', 'Ends', when(m.ends_on))) : null,
      runsOf(m));
  }

  // missions draws the Missions page.
  async function missions() {
    const paint = painter();
    const [ms, ag] = await Promise.all([api('GET', '/api/missions'), api('GET', '/api/agents/settings').catch(() => api('GET', '/api/agents'))]);
    const list = ms.missions || [];
    if (!missionForm) missionForm = newMissionForm(ag.agents || []);
    const asking = list.filter(m => m.still_useful);
    paint(
      h('h2', {}, 'Missions'),
      asking.length ? h('p', { class: 'sentence' }, words(' ', asking.length, asking.length === 1 ? 'mission asks' : 'missions ask', 'whether it is still useful.')) : null,
      list.length ? list.map(missionCard) : h('p', { class: 'muted' }, 'No missions yet: add one below.'),
      missionForm);
  }

  // --- Health ---
  async function health() {
    const paint = painter();
    const r = await api('GET', '/api/health');
    const db = r.database || {}, q = r.queue || {}, actors = r.actors || [], jobs = q.jobs || {};
    const depth = a => (a.path || '').split('/').length - 1;
    paint(
      h('h2', {}, 'Health'),
      h('p', { class: words(' ', 'sentence', r.status === 'ok' ? null : 'bad') }, r.status === 'ok' ? 'Every part works.' : 'Something needs a look:'),
      (r.problems || []).length ? h('ul', { class: 'problems' }, r.problems.map(p => h('li', {}, p))) : null,
      (r.warnings || []).length ? h('ul', { class: 'warnings' }, r.warnings.map(w => h('li', {}, w))) : null,
      h('div', { class: 'muted' }, words(' · ', words(' ', 'buddi', r.version || ''), words(' ', 'pid', r.pid || ''), r.started_at ? words(' ', 'up since', when(r.started_at)) : '', r.listener || '')),
      h('h2', {}, 'Supervision tree'),
      h('ol', { class: 'tree' }, actors.map(a => h('li', { class: 'depth-' + Math.min(depth(a), 5), 'data-actor': a.path },
        h('span', { class: 'name' }, (a.path || '').split('/').pop()),
        h('span', { class: words(' ', 'pill', a.state === 'running' ? 'enabled' : 'disabled') }, a.state),
        h('span', { class: 'muted' }, words(' · ', words(' ', a.restarts, a.restarts === 1 ? 'restart' : 'restarts'), a.strategy || ''))))),
      h('h2', {}, 'Queue'),
      h('p', {}, q.running ? 'The queue is working jobs.' : 'The queue is not running.'),
      q.error ? h('p', { class: 'sentence bad' }, q.error) : null,
      h('div', { class: 'scroll' }, h('table', {}, Object.keys(jobs).sort().map(k => h('tr', {}, h('td', {}, k), h('td', {}, jobs[k]))))),
      q.failed ? h('p', {}, h('a', { href: '#/home' }, words(' ', q.failed, q.failed === 1 ? 'failed job' : 'failed jobs', 'on Home'))) : null,
      (q.queues || []).length ? h('p', { class: 'muted' }, words(', ', q.queues.map(x => x.paused ? words(' ', x.name, '(paused)') : x.name))) : null,
      h('p', {}, h('a', { href: '/river/' }, 'The queue in detail (River’s own view)'), ' · ', h('a', { href: '/metrics' }, 'Metrics for Prometheus')),
      h('h2', {}, 'Database'),
      h('p', {}, db.reachable ? words(' ', 'PostgreSQL', db.version || '', 'answers') : words(' ', 'The database does not answer:', db.error || '')),
      h('div', { class: 'muted' }, words(' · ', db.source || '', db.target || '')),
      r.vault ? h('div', {}, h('h2', {}, 'Vault'), h('p', {}, r.vault.open ? words(' ', 'Open:', r.vault.where || '') : words(' ', 'Locked:', r.vault.problem || ''))) : null);
  }

  return { settings, firstRun, missions, health };
}
