// The Settings sub-navigation, shared by every Settings page.

import { h } from '/dom.js';

const settingsPages = [['accounts', 'Accounts and models'], ['developer', 'Developer'], ['telegram', 'Telegram'], ['tailnet', 'Tailnet']];

// settingsNav draws the Settings sub-navigation with active (a key of settingsPages) marked.
export function settingsNav(active) {
  return h('nav', { class: 'sub' }, settingsPages.map(([key, label]) =>
    h('a', { href: '#/settings/' + key, class: key === active ? 'active' : null }, label)));
}
