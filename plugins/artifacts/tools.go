package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"buddi/core/artifact"
	"buddi/plugins"
)

var (
	_ plugins.Tool = (*listTool)(nil)
	_ plugins.Tool = (*readTool)(nil)
	_ plugins.Tool = (*writeTool)(nil)
	_ plugins.Tool = (*attachTool)(nil)
)

// readEffects are the effects of the tools that change nothing.
var readEffects = []plugins.Effect{plugins.EffectRead}

// decode reads a call's arguments into v.
func decode(tool string, call plugins.Call, v any) error {
	if err := json.Unmarshal(call.Args, v); err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	return nil
}

// result is v as the model's JSON text and the surfaces' data.
func result(v any) (plugins.Result, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{Text: string(data), Data: data}, nil
}

// --- artifacts.list ---

// listTool is artifacts.list.
type listTool struct{ p *Plugin }

// listArgs are artifacts.list's arguments.
type listArgs struct {
	Name       string `json:"name"`
	VersionsOf string `json:"versions_of"`
	Limit      int    `json:"limit"`
}

// Listing is artifacts.list's result.
type Listing struct {
	Title     string              `json:"title"`     // what is listed
	Artifacts []artifact.Artifact `json:"artifacts"` // newest first, or the versions first to last
	Truncated bool                `json:"truncated"` // more matched than the limit
}

// Spec declares artifacts.list: auto, reads only.
func (t *listTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".list",
		Description: fmt.Sprintf("List the files (artifacts) you may read: the ones you made and the ones made in this conversation. "+
			"Each is shown at its latest version, with its id, name, media type, size, version and how many versions it has, newest first; "+
			"name filters by a part of the name, versions_of lists every version of one artifact instead. At most %d (default %d).", MaxList, DefaultList),
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"name":        {"type": "string", "maxLength": %d, "description": "Only artifacts whose name contains this, ignoring case."},
				"versions_of": {"type": "string", "maxLength": 64, "description": "An artifact's id: list every version of it, the first first."},
				"limit":       {"type": "integer", "minimum": 1, "maximum": %d, "description": "How many to list (default %d)."}
			},
			"additionalProperties": false
		}`, maxName, MaxList, DefaultList)),
		Effects: readEffects,
		Tier:    plugins.TierAuto,
	}
}

// Describe says what is listed.
func (t *listTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a listArgs
	if err := decode(Name+".list", call, &a); err != nil {
		return plugins.Envelope{}, err
	}
	s := "List your artifacts"
	if a.VersionsOf != "" {
		s = "List the versions of artifact " + a.VersionsOf
	} else if a.Name != "" {
		s = fmt.Sprintf("List your artifacts named like %q", a.Name)
	}
	return plugins.Envelope{Summary: s, Effects: readEffects, Detail: map[string]any{"name": a.Name, "versions_of": a.VersionsOf}, Preview: s}, nil
}

// Execute lists what the agent may read.
func (t *listTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a listArgs
	if err := decode(Name+".list", call, &a); err != nil {
		return plugins.Result{}, err
	}
	if t.p.store == nil {
		return plugins.Result{}, errNoStore
	}
	limit := a.Limit
	if limit <= 0 || limit > MaxList {
		limit = DefaultList
	}
	out := Listing{Title: "Your artifacts", Artifacts: []artifact.Artifact{}}
	if a.VersionsOf != "" {
		one, err := t.p.visible(ctx, call, a.VersionsOf)
		if err != nil {
			return toolResult(err)
		}
		all, err := t.p.store.Versions(ctx, one.ID)
		if err != nil {
			return plugins.Result{}, err
		}
		for _, v := range all {
			if Visible(v, call.Agent, call.ConversationID) {
				out.Artifacts = append(out.Artifacts, v)
			}
		}
		out.Title = "Versions of " + one.Name
	} else if call.Agent != "" || call.ConversationID != "" { // both empty would be the owner's whole list
		list, err := t.p.store.List(ctx, artifact.Filter{Agent: call.Agent, ConversationID: call.ConversationID, Name: a.Name, Limit: limit + 1})
		if err != nil {
			return plugins.Result{}, err
		}
		if len(list) > 0 {
			out.Artifacts = list
		}
	}
	if len(out.Artifacts) > limit {
		out.Artifacts, out.Truncated = out.Artifacts[:limit], true
	}
	return result(out)
}

// --- artifacts.read ---

// readTool is artifacts.read.
type readTool struct{ p *Plugin }

// readArgs are artifacts.read's arguments.
type readArgs struct {
	ID       string `json:"id"`
	Offset   int    `json:"offset"`
	MaxBytes int    `json:"max_bytes"`
}

// Reading is artifacts.read's result: the version's description and, for text, a part of it.
type Reading struct {
	Title      string `json:"title"`                 // the name
	ID         string `json:"id"`                    // the version read
	Name       string `json:"name"`                  // its name
	MediaType  string `json:"media_type"`            // its media type
	Version    int    `json:"version"`               // its number
	Lineage    string `json:"lineage"`               // its first version's id
	Latest     string `json:"latest,omitempty"`      // the latest version's id, when another one you may read
	Bytes      int64  `json:"bytes"`                 // its whole size
	SHA256     string `json:"sha256"`                // its digest
	Binary     bool   `json:"binary,omitempty"`      // not text: only described
	Offset     int    `json:"offset,omitempty"`      // where the text starts, in bytes
	Text       string `json:"text,omitempty"`        // the text read
	Truncated  bool   `json:"truncated,omitempty"`   // more text follows
	NextOffset int    `json:"next_offset,omitempty"` // the offset to read on from
	Note       string `json:"note,omitempty"`        // a sentence for a binary file
}

// Spec declares artifacts.read: auto, reads only.
func (t *readTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".read",
		Description: fmt.Sprintf("Read one version of a file (artifact) you may read, by its id: text files give their text, at most max_bytes from offset "+
			"(default %s, at most %s; next_offset reads on); other files give their description only. The id is one exact version; "+
			"the result names the latest when there is a newer one.", size(DefaultRead), size(MaxRead)),
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"id":        {"type": "string", "minLength": 1, "maxLength": 64, "description": "The version's id (from artifacts.list)."},
				"offset":    {"type": "integer", "minimum": 0, "description": "Where to start, in bytes (default 0)."},
				"max_bytes": {"type": "integer", "minimum": 1, "maximum": %d, "description": "How many bytes of text at most (default %d)."}
			},
			"required": ["id"],
			"additionalProperties": false
		}`, MaxRead, DefaultRead)),
		Effects: readEffects,
		Tier:    plugins.TierAuto,
	}
}

// Describe names the version.
func (t *readTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a readArgs
	if err := decode(Name+".read", call, &a); err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{Summary: "Read artifact " + a.ID, Effects: readEffects, Targets: []string{a.ID}, Detail: map[string]any{"id": a.ID}, Preview: "Read artifact " + a.ID}, nil
}

// Execute reads the version, if the agent may.
func (t *readTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a readArgs
	if err := decode(Name+".read", call, &a); err != nil {
		return plugins.Result{}, err
	}
	if t.p.store == nil {
		return plugins.Result{}, errNoStore
	}
	if _, err := t.p.visible(ctx, call, a.ID); err != nil {
		return toolResult(err)
	}
	meta, data, err := t.p.store.Open(ctx, a.ID)
	if err != nil {
		return plugins.Result{}, err
	}
	out := Reading{Title: meta.Name, ID: meta.ID, Name: meta.Name, MediaType: meta.MediaType, Version: meta.Version, Lineage: meta.Lineage, Bytes: meta.Bytes, SHA256: meta.SHA256}
	if latest, err := t.p.store.Latest(ctx, meta.ID); err == nil && latest.ID != meta.ID && Visible(latest, call.Agent, call.ConversationID) {
		out.Latest = latest.ID
	}
	if !Textual(meta.MediaType) || !utf8.Valid(data) {
		out.Binary = true
		out.Note = fmt.Sprintf("%s (version %d, %s, %s) is not text, so only its description is given; artifacts.attach shows it to the owner.", meta.Name, meta.Version, meta.MediaType, size(meta.Bytes))
		return result(out)
	}
	if a.Offset > len(data) {
		return toolResult(refusal(fmt.Sprintf("Offset %d is past the end of %s, which has %d bytes.", a.Offset, meta.Name, len(data))))
	}
	start := a.Offset
	for start < len(data) && !utf8.RuneStart(data[start]) {
		start++ // an offset inside a character starts at the next one
	}
	limit := a.MaxBytes
	if limit <= 0 || limit > MaxRead {
		limit = DefaultRead
	}
	end := min(start+limit, len(data))
	for end > start && end < len(data) && !utf8.RuneStart(data[end]) {
		end-- // never cut a character in two
	}
	out.Offset, out.Text = start, string(data[start:end])
	if end < len(data) {
		out.Truncated, out.NextOffset = true, end
	}
	return result(out)
}

// --- artifacts.write ---

// writeTool is artifacts.write.
type writeTool struct{ p *Plugin }

// writeArgs are artifacts.write's arguments.
type writeArgs struct {
	Name      string `json:"name"`
	MediaType string `json:"media_type"`
	Content   string `json:"content"`
	Previous  string `json:"previous"`
}

// Written is artifacts.write's result.
type Written struct {
	Title     string `json:"title"`              // the name
	Artifact  string `json:"artifact"`           // the new version's id
	Name      string `json:"name"`               // its name
	MediaType string `json:"media_type"`         // its media type
	Version   int    `json:"version"`            // its number
	Lineage   string `json:"lineage"`            // its first version's id
	Previous  string `json:"previous,omitempty"` // the version it follows
	Bytes     int64  `json:"bytes"`              // its size
	SHA256    string `json:"sha256"`             // its digest
}

// Spec declares artifacts.write: auto, since it only ever adds a version.
func (t *writeTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name: Name + ".write",
		Description: fmt.Sprintf("Save text as a file (artifact) the owner can open on the Files page: a new one (give name, and media_type, default text/plain), "+
			"or a new version of one you made (give previous: the id of its latest version; name and media_type default to its). "+
			"Nothing is ever overwritten: every write is a new version with its own id, and the old versions stay readable. At most %s of text.", size(MaxWrite)),
		Schema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"name":       {"type": "string", "maxLength": %d, "description": "A file name, e.g. notes.md; required for a new artifact."},
				"media_type": {"type": "string", "maxLength": 100, "description": "A text media type: text/plain (default), text/markdown, text/csv, application/json, …"},
				"content":    {"type": "string", "maxLength": %d, "description": "The file's text."},
				"previous":   {"type": "string", "maxLength": 64, "description": "To write a new version: the id of the artifact's latest version."}
			},
			"required": ["content"],
			"additionalProperties": false
		}`, maxName, MaxWrite)),
		Effects: []plugins.Effect{plugins.EffectStateWrite},
		Tier:    plugins.TierAuto,
	}
}

// Describe names the file, its size and digest.
func (t *writeTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a writeArgs
	if err := decode(Name+".write", call, &a); err != nil {
		return plugins.Envelope{}, err
	}
	sum := sha256.Sum256([]byte(a.Content))
	what := "Save " + a.Name
	if a.Previous != "" {
		what = "Save a new version of artifact " + a.Previous
	}
	what += fmt.Sprintf(" (%s)", size(int64(len(a.Content))))
	return plugins.Envelope{
		Summary: what, Effects: []plugins.Effect{plugins.EffectStateWrite}, Preview: what,
		Detail: map[string]any{"name": a.Name, "media_type": a.MediaType, "previous": a.Previous, "bytes": len(a.Content), "sha256": hex.EncodeToString(sum[:])},
	}, nil
}

// Execute saves the text as a new artifact or a new version of the agent's own.
func (t *writeTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a writeArgs
	if err := decode(Name+".write", call, &a); err != nil {
		return plugins.Result{}, err
	}
	if t.p.store == nil {
		return plugins.Result{}, errNoStore
	}
	if len(a.Content) > MaxWrite {
		return toolResult(refusal(fmt.Sprintf("The content is %s; an artifact written here holds at most %s, so split it into several files.", size(int64(len(a.Content))), size(MaxWrite))))
	}
	if a.Previous != "" {
		prev, err := t.p.visible(ctx, call, a.Previous)
		if err != nil {
			return toolResult(err)
		}
		if prev.Agent != call.Agent {
			return toolResult(refusal(fmt.Sprintf("Artifact %s was made by %s, and only the agent that made an artifact writes its versions: save your own copy without previous.", prev.ID, prev.Agent)))
		}
		if strings.TrimSpace(a.MediaType) == "" && (!Textual(prev.MediaType) || !utf8Charset(prev.MediaType)) {
			return toolResult(refusal(fmt.Sprintf("Artifact %s is %s, and artifacts.write saves text (UTF-8): give media_type (text/plain, text/markdown, …) for the new version, or save a new file without previous.", prev.ID, prev.MediaType)))
		}
	} else if a.Name == "" {
		return toolResult(refusal("A new artifact needs a name such as notes.md; to write a new version of one you made, give previous instead."))
	}
	if a.Name != "" {
		if err := checkName(a.Name); err != nil {
			return toolResult(err)
		}
	}
	mt := strings.TrimSpace(a.MediaType)
	if mt == "" && a.Previous == "" {
		mt = "text/plain"
	}
	if mt != "" && !Textual(mt) {
		return toolResult(refusal(fmt.Sprintf("artifacts.write saves text, and %q is not a text media type: use text/plain, text/markdown, text/csv, application/json or another text type.", a.MediaType)))
	}
	if mt != "" && !utf8Charset(mt) {
		return toolResult(refusal(fmt.Sprintf("artifacts.write saves UTF-8 text, and %q names another charset: leave the charset out or give charset=utf-8.", a.MediaType)))
	}
	saved, err := t.p.store.Save(ctx, artifact.Artifact{
		Agent: call.Agent, ConversationID: call.ConversationID, RunID: call.RunID,
		Name: a.Name, MediaType: mt, Source: Name + ".write", Previous: a.Previous,
	}, []byte(a.Content))
	if err != nil {
		return toolResult(err)
	}
	return result(Written{Title: saved.Name, Artifact: saved.ID, Name: saved.Name, MediaType: saved.MediaType, Version: saved.Version,
		Lineage: saved.Lineage, Previous: saved.Previous, Bytes: saved.Bytes, SHA256: saved.SHA256})
}

// --- artifacts.attach ---

// attachTool is artifacts.attach.
type attachTool struct{ p *Plugin }

// attachArgs are artifacts.attach's arguments.
type attachArgs struct {
	ID string `json:"id"`
}

// Attached is artifacts.attach's result data: what the surfaces draw as the file.
type Attached struct {
	Renderer  string `json:"renderer"`   // always "file"
	Artifact  string `json:"artifact"`   // the version's id
	Name      string `json:"name"`       // its name
	Title     string `json:"title"`      // its name, for the canvas
	MediaType string `json:"media_type"` // its media type
	Version   int    `json:"version"`    // its number
	Bytes     int64  `json:"bytes"`      // its size
}

// Spec declares artifacts.attach: auto, it only shows the owner a file.
func (t *attachTool) Spec() plugins.Spec {
	return plugins.Spec{
		Name:        Name + ".attach",
		Description: "Show the owner one version of a file (artifact) you may read, in this turn: the owner gets a link to download it, and sees it when it is an image.",
		Schema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The version's id (from artifacts.list or artifacts.write)."}
			},
			"required": ["id"],
			"additionalProperties": false
		}`),
		Effects: readEffects,
		Tier:    plugins.TierAuto,
	}
}

// Describe names the version.
func (t *attachTool) Describe(_ context.Context, call plugins.Call) (plugins.Envelope, error) {
	var a attachArgs
	if err := decode(Name+".attach", call, &a); err != nil {
		return plugins.Envelope{}, err
	}
	return plugins.Envelope{Summary: "Show the owner artifact " + a.ID, Effects: readEffects, Targets: []string{a.ID}, Detail: map[string]any{"id": a.ID}, Preview: "Show the owner artifact " + a.ID}, nil
}

// Execute returns the file's data for the surfaces.
func (t *attachTool) Execute(ctx context.Context, call plugins.Call, _ *plugins.Envelope) (plugins.Result, error) {
	var a attachArgs
	if err := decode(Name+".attach", call, &a); err != nil {
		return plugins.Result{}, err
	}
	if t.p.store == nil {
		return plugins.Result{}, errNoStore
	}
	v, err := t.p.visible(ctx, call, a.ID)
	if err != nil {
		return toolResult(err)
	}
	data, err := json.Marshal(Attached{Renderer: "file", Artifact: v.ID, Name: v.Name, Title: v.Name, MediaType: v.MediaType, Version: v.Version, Bytes: v.Bytes})
	if err != nil {
		return plugins.Result{}, err
	}
	return plugins.Result{Text: fmt.Sprintf("Attached %s (version %d, %s, %s); the owner sees it with a link to download it.", v.Name, v.Version, v.MediaType, size(v.Bytes)), Data: data}, nil
}
