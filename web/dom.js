// The dashboard's one way to build what it shows. Strings and numbers become text, never
// markup; lists are drawn as their items; null, undefined and false are drawn as nothing;
// anything else (a plain object, a promise) is a mistake and throws, rather than printing
// "[object …]". The only HTML that goes in is the server's sanitised Markdown, wrapped by
// sanitised() so that it cannot be confused with text.

// Sanitised is HTML the server rendered and sanitised (internal/markdown).
class Sanitised {
  constructor(html) { this.html = String(html); }
}

// sanitised marks html, which must come from the server's sanitiser, for insertion as HTML.
export function sanitised(html) { return new Sanitised(html ?? ''); }

const absent = v => v === null || v === undefined || v === false;

// each calls fn for every item of kids, flattened, skipping absent ones.
function each(kids, fn) {
  for (const k of kids) {
    if (Array.isArray(k)) each(k, fn);
    else if (!absent(k)) fn(k);
  }
}

// nodeOf turns one item into a node, or throws.
function nodeOf(k) {
  if (k instanceof Node) return k;
  if (typeof k === 'string' || typeof k === 'number' || typeof k === 'bigint' || k === true) return document.createTextNode(k === true ? '' : String(k));
  if (k instanceof Sanitised) {
    const t = document.createElement('template');
    t.innerHTML = k.html; // the server's sanitised HTML, and nothing else
    return t.content;
  }
  throw new TypeError(`cannot draw ${Object.prototype.toString.call(k)}: pass a node, a string or a list of them`);
}

// words joins the present parts with sep: words(' · ', agent, tool) is "tool" when there is no
// agent. Parts may be lists; they must be strings or numbers.
export function words(sep, ...parts) {
  const out = [];
  each(parts, p => {
    if (typeof p !== 'string' && typeof p !== 'number') throw new TypeError(`cannot put ${Object.prototype.toString.call(p)} in words`);
    if (p !== '') out.push(String(p));
  });
  return out.join(sep);
}

// h builds an element: h('div', {class: 'x', onclick: f}, 'text', child, [more], null).
// An attribute that is absent is left out; on… attributes take functions; class may be a list.
export function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (absent(v)) continue;
    if (k.startsWith('on')) {
      if (typeof v !== 'function') throw new TypeError(`${k} on <${tag}> must be a function`);
      e.addEventListener(k.slice(2), v);
    } else if (k === 'class') {
      const c = words(' ', v);
      if (c) e.setAttribute('class', c);
    } else if (typeof v === 'object') {
      throw new TypeError(`the attribute ${k} on <${tag}> cannot be ${Object.prototype.toString.call(v)}`);
    } else {
      e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  each(kids, k => e.append(nodeOf(k)));
  return e;
}

// fill replaces parent's children with kids, drawn as h draws them.
export function fill(parent, ...kids) {
  const frag = document.createDocumentFragment();
  each(kids, k => frag.append(nodeOf(k)));
  parent.replaceChildren(frag);
}

// add appends kids to parent, drawn as h draws them.
export function add(parent, ...kids) {
  each(kids, k => parent.append(nodeOf(k)));
}
