// Package logfile is buddi serve's log on disk and its reading. Serve writes JSON lines to
// <home>/logs/buddi.log (directory 0700, files 0600) through the same redaction as the
// terminal; the file is rotated by size, buddi.log.1 being the newest old one, and a few old
// files are kept. `buddi logs` reads the files oldest first, from a time on, renders them as
// text (or passes the JSON through), and follows the current file across a rotation. Demote
// keeps a chatty library's info lines (River's, the migrations') at debug.
package logfile
