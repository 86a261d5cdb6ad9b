// Package web is the dashboard's page: plain HTML, CSS and JavaScript modules, embedded in
// the binary, so running buddi from a fresh clone needs no build step.
package web

import "embed"

// FS holds index.html, app.js (the router and the pages it draws), pages.js (the owner pages),
// watch.js (Reminders, Sentinels and alerts), phone.js (Settings → Telegram and Tailnet),
// nav.js (the Settings sub-navigation), files.js (the Files page), canvas.js (the canvas beside the chat), memory.js (the Memory page), email.js (the Email page), dom.js (the one rendering helper) and app.css at its root.
//
//go:embed index.html app.js app.css dom.js pages.js watch.js phone.js nav.js canvas.js files.js memory.js email.js
var FS embed.FS
