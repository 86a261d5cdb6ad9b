// The dashboard's watch pages: Reminders, and Sentinels and alerts. app.js's router dispatches
// here with the helpers pages.js gets.

import { h } from '/dom.js';

// watch builds the pages over the app's helpers: api(method, path, body), painter(), act(fn,
// doneText), say(text) and when(iso).
export function watch({ api, painter, act, say, when }) {
  async function reminders() {
    painter()(h('h2', {}, 'Reminders'));
  }
  async function alerts() {
    painter()(h('h2', {}, 'Sentinels and alerts'));
  }
  return { reminders, alerts };
}
