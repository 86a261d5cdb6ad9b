package artifacts

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"strings"
	"unicode"
	"unicode/utf8"

	"buddi/core/artifact"
	"buddi/plugins"
)

// Name is the plugin's name; its tools are "artifacts.<verb>".
const Name = "artifacts"

// Version is the plugin's version; it is part of every action's hash.
const Version = "0.1.0"

// Bounds on what the tools carry.
const (
	// MaxWrite bounds the text of one artifacts.write, in bytes.
	MaxWrite = 1 << 20
	// DefaultRead is how many bytes of text artifacts.read returns unless asked for fewer
	// or more.
	DefaultRead = 64 << 10
	// MaxRead bounds the bytes of text one artifacts.read returns.
	MaxRead = 256 << 10
	// DefaultList is how many artifacts artifacts.list returns unless asked for another
	// number.
	DefaultList = 50
	// MaxList bounds one artifacts.list.
	MaxList = 200
	// maxName bounds an artifact's name, in bytes.
	maxName = 200
)

// Deps is what the plugin needs from the composition root.
type Deps struct {
	// Store is core's artifact store. Without it every tool refuses, saying so.
	Store *artifact.Store
}

// Plugin is the artifacts plugin over core's store.
type Plugin struct {
	store *artifact.Store
}

// New returns the plugin for deps.
func New(deps Deps) *Plugin { return &Plugin{store: deps.Store} }

// Manifest is the artifacts plugin for deps: four auto tools and no schema.
func Manifest(deps Deps) plugins.Manifest { return New(deps).Manifest() }

// Manifest is the plugin's manifest. It has no Schema and no Migrations on purpose: the
// artifacts are core's.
func (p *Plugin) Manifest() plugins.Manifest {
	return plugins.Manifest{
		Name:        Name,
		Version:     Version,
		Description: "Lists, reads and writes the agent's files in core's artifact store (every write a new version), and shows one to the owner.",
		Tools:       []plugins.Tool{&listTool{p: p}, &readTool{p: p}, &writeTool{p: p}, &attachTool{p: p}},
		Views: []plugins.ViewDescriptor{
			{Tool: Name + ".list", Renderer: "table", Options: map[string]any{"columns": []any{"name", "version", "versions", "media_type", "bytes", "agent", "created_at", "id"}}},
			{Tool: Name + ".read", Renderer: "document"},
			{Tool: Name + ".write", Renderer: "keyvalue"},
			{Tool: Name + ".attach", Renderer: "keyvalue"},
		},
	}
}

// errNoStore refuses every call when the build has no artifact store.
var errNoStore = errors.New("artifacts: there is no artifact store here (buddi serve has one), so nothing is read or written")

// Visible reports whether agent, in a call of conversation conv (empty for none), may read a:
// the agent made it, or it was made in conv. This is the whole rule; anything else is
// refused.
func Visible(a artifact.Artifact, agent, conv string) bool {
	if agent != "" && a.Agent == agent {
		return true
	}
	return conv != "" && a.ConversationID == conv
}

// notVisible is the one sentence for an artifact the agent may not read, whether or not it
// exists.
func notVisible(id string) error {
	return refusal(fmt.Sprintf("There is no artifact %s you may read: an agent reads the artifacts it made and those made in this conversation (artifacts.list shows them).", id))
}

// visible returns version id if call's agent may read it, or the one refusal.
func (p *Plugin) visible(ctx context.Context, call plugins.Call, id string) (artifact.Artifact, error) {
	a, err := p.store.Get(ctx, id)
	if errors.Is(err, artifact.ErrNotFound) || (err == nil && !Visible(a, call.Agent, call.ConversationID)) {
		return artifact.Artifact{}, notVisible(id)
	}
	return a, err
}

// refusedError is a refusal for the model: its text is the whole result.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

func refusal(msg string) error { return &refusedError{msg: msg} }

// toolResult turns a refusal into an error result for the model; other errors stay errors.
func toolResult(err error) (plugins.Result, error) {
	if r, ok := errors.AsType[*refusedError](err); ok {
		return plugins.Result{Text: r.msg, IsError: true}, nil
	}
	if nl, ok := errors.AsType[*artifact.NotLatestError](err); ok {
		return plugins.Result{Text: upper(nl.Error()) + ".", IsError: true}, nil
	}
	return plugins.Result{}, err
}

// upper capitalises a sentence's first letter.
func upper(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// Textual reports whether mediaType names text (artifact.Textual): only text is written,
// and only text is read back as text.
func Textual(mediaType string) bool { return artifact.Textual(mediaType) }

// utf8Charset reports whether mediaType names no charset, or UTF-8 (or ASCII, which UTF-8
// text of ASCII only is): what artifacts.write writes is always UTF-8.
func utf8Charset(mediaType string) bool {
	_, params, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	switch strings.ToLower(params["charset"]) {
	case "", "utf-8", "utf8":
		return true
	}
	return false
}

// checkName refuses a name that is not a plain file name.
func checkName(name string) error {
	switch {
	case name == "" || strings.TrimSpace(name) != name:
		return refusal("The name must be a file name without leading or trailing spaces, such as notes.md.")
	case len(name) > maxName:
		return refusal(fmt.Sprintf("The name is %d bytes; give one of at most %d.", len(name), maxName))
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`):
		return refusal("The name must be a file name, not a path: leave out / and \\.")
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Cf, r) }) >= 0:
		return refusal("The name has a control or invisible character in it; use printable characters only.")
	}
	return nil
}

// size says n bytes for a person.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
