// The dashboard's Files page: the artifacts core keeps (screenshots, what agents wrote, what
// the owner sent), each at its latest version, with its versions, a preview and a download.
// app.js's router dispatches here (#/files, #/files/<id>) with the helpers pages.js gets.
// Files are shown safely: text as text (the server sends it as text/plain), raster images
// as images, everything else only as a download (an attachment nothing renders).

import { h, words } from '/dom.js';

// files builds the page over the app's helpers: api(method, path, body), painter(), act(fn,
// doneText), say(text) and when(iso).
export function files({ api, painter, say, when }) {
  const enc = encodeURIComponent;
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  // filter is the owner's search, kept across the redraws the live channel brings.
  const filter = { name: '', agent: '' };

  function size(n) {
    if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
    if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
    return words(' ', n, n === 1 ? 'byte' : 'bytes');
  }

  const download = f => h('a', { class: 'download', href: `/api/files/${enc(f.id)}/download`, download: f.name || 'file' }, 'Download');

  function row(f) {
    return h('tr', { 'data-file': f.id },
      h('td', {}, h('a', { href: '#/files/' + enc(f.id) }, f.name)),
      h('td', {}, f.agent),
      h('td', { class: 'muted', title: f.conversation_id || null }, f.conversation_id ? f.conversation_id.slice(0, 8) : '—'),
      h('td', {}, f.media_type),
      h('td', {}, size(f.bytes)),
      h('td', {}, f.versions > 1 ? words(' ', 'version', f.version, 'of', f.versions) : '1'),
      h('td', {}, when(f.created_at)),
      h('td', {}, download(f)));
  }

  function search() {
    const name = h('input', { type: 'search', name: 'name', placeholder: 'name contains…', value: filter.name, 'aria-label': 'file name contains' });
    const agent = h('input', { type: 'search', name: 'agent', placeholder: 'agent', value: filter.agent, 'aria-label': 'made by agent' });
    return h('form', { class: 'files-search', onsubmit: ev => {
      ev.preventDefault();
      filter.name = name.value.trim();
      filter.agent = agent.value.trim();
      list();
    } }, name, ' ', agent, ' ', h('button', { type: 'submit' }, 'Search'));
  }

  async function list() {
    const paint = painter();
    const q = new URLSearchParams();
    if (filter.name) q.set('name', filter.name);
    if (filter.agent) q.set('agent', filter.agent);
    const out = await api('GET', '/api/files' + (q.toString() ? '?' + q : ''));
    const all = out.files || [];
    paint(
      h('h2', {}, 'Files'),
      search(),
      all.length
        ? h('div', { class: 'scroll' }, h('table', { class: 'files' },
          h('thead', {}, h('tr', {}, ['Name', 'Agent', 'Conversation', 'Type', 'Size', 'Versions', 'Created', ''].map(c => h('th', {}, c)))),
          h('tbody', {}, all.map(row))))
        : h('div', { class: 'card empty' },
          h('p', {}, filter.name || filter.agent ? 'No file matches.' : 'No file is kept yet.'),
          h('p', { class: 'muted' }, 'Screenshots, files agents write with artifacts.write and files you send are kept here, every version of each.')),
      out.truncated ? h('p', { class: 'muted' }, 'Only the newest files are listed: search by name or agent to find an older one.') : null);
  }

  // preview draws version f inline when it is shown safely: an image, or text as text.
  async function preview(f, previewable) {
    if (!previewable) return h('p', { class: 'muted' }, words(' ', 'A', f.media_type, 'file is not shown here: download it to open it.'));
    const src = `/api/files/${enc(f.id)}/preview`;
    if (/^image\/(png|jpeg|gif|webp)$/.test(f.media_type)) return h('img', { class: 'artifact file-preview', src, alt: f.name });
    const res = await fetch(src);
    if (!res.ok) return h('p', { class: 'muted' }, 'The preview could not be read: download the file instead.');
    const text = await res.text();
    return [h('pre', { class: 'file-preview' }, text),
      res.headers.get('X-Buddi-Truncated') ? h('p', { class: 'muted' }, 'Only the beginning is shown: download the file for the rest.') : null];
  }

  async function one(id) {
    const paint = painter();
    const out = await api('GET', '/api/files/' + enc(id));
    const f = out.file, versions = out.versions || [];
    const shown = await preview(f, out.previewable);
    paint(
      h('p', {}, h('a', { href: '#/files' }, '← Files')),
      h('h2', {}, f.name),
      h('p', { class: 'sentence' }, words(' · ', words(' ', 'version', f.version, 'of', versions.length), f.media_type, size(f.bytes),
        words(' ', 'by', f.agent), when(f.created_at), f.source || '')),
      h('div', { class: 'buttons' }, download(f)),
      h('div', { class: 'card' }, shown),
      h('h3', {}, 'Versions'),
      h('div', { class: 'scroll' }, h('table', { class: 'versions' },
        h('thead', {}, h('tr', {}, ['Version', 'Name', 'Size', 'Created', 'SHA-256', ''].map(c => h('th', {}, c)))),
        h('tbody', {}, versions.map(v => h('tr', { 'data-version': v.version, class: v.id === f.id ? 'active' : null },
          h('td', {}, v.id === f.id ? String(v.version) : h('a', { href: '#/files/' + enc(v.id) }, String(v.version))),
          h('td', {}, v.name),
          h('td', {}, size(v.bytes)),
          h('td', {}, when(v.created_at)),
          h('td', { class: 'muted', title: v.sha256 }, v.sha256.slice(0, 12)),
          h('td', {}, download(v))))))));
  }

  // page draws the list, or one file when id names one.
  async function page(id) {
    if (id && !uuid.test(id)) { say('That is not a file’s address: pick one from the list.'); return list(); }
    return id ? one(id) : list();
  }

  return { page };
}
