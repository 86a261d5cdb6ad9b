// The dashboard's Settings → Telegram and Settings → Tailnet pages. app.js's router dispatches
// here with the helpers pages.js gets.

import { h } from '/dom.js';
import { settingsNav } from '/nav.js';

// phone builds the pages over the app's helpers: api(method, path, body), painter(), act(fn,
// doneText), say(text) and when(iso).
export function phone({ api, painter, act, say, when }) {
  async function telegram() {
    painter()(settingsNav('telegram'), h('h2', {}, 'Settings → Telegram'));
  }
  async function tailnet() {
    painter()(settingsNav('tailnet'), h('h2', {}, 'Settings → Tailnet'));
  }
  return { telegram, tailnet };
}
