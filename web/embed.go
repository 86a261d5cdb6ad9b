// Package web is the dashboard's page: plain HTML, CSS and JavaScript modules, embedded in
// the binary, so running buddi from a fresh clone needs no build step.
package web

import "embed"

// FS holds index.html, app.js (the pages), dom.js (the one rendering helper) and app.css at
// its root.
//
//go:embed index.html app.js app.css dom.js
var FS embed.FS
