// Package devtools is a small client of the Chrome DevTools protocol, for a browser this
// process starts itself: the screenshot tool's headless Chromium (package shot). It holds
// what a screenshot needs and nothing more: start the browser, open a tab in a session of
// its own, set its window, load a page and wait for its load event, read a value from it,
// capture it as a PNG, close the browser.
//
// The connection is the browser's --remote-debugging-pipe: commands go down the browser's
// descriptor 3 and answers and events come back up its descriptor 4, each message a JSON
// text ended by a NUL byte. No port is opened: nothing else on the machine, another local
// process or a page the browser loads, can reach the protocol.
package devtools
