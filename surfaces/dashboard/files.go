package dashboard

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"unicode/utf8"

	"buddi/core/artifact"
)

// Files serves the Files page: core's artifact store (*artifact.Store).
type Files interface {
	// List returns the latest version of each lineage f keeps, newest first.
	List(ctx context.Context, f artifact.Filter) ([]artifact.Artifact, error)
	// Versions lists every version of id's lineage, the first first; an error matching
	// artifact.ErrNotFound when there is no version id.
	Versions(ctx context.Context, id string) ([]artifact.Artifact, error)
	// Open returns version id and its bytes; an error matching artifact.ErrNotFound when
	// there is none.
	Open(ctx context.Context, id string) (artifact.Artifact, []byte, error)
}

var _ Files = (*artifact.Store)(nil)

// MaxPreviewText bounds the text a preview serves; the rest is downloaded.
const MaxPreviewText = 256 << 10

// filesShown is how many files the page lists at most.
const filesShown = 200

// previewImages are the image types shown inline: raster formats that run nothing. An SVG,
// which can carry script, is previewed as its source text.
var previewImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// filesRoutes registers the Files page's routes when Deps.Files is set.
func (s *Server) filesRoutes() {
	if s.deps.Files == nil {
		return
	}
	s.handle("GET /api/files", s.listFiles)
	s.handle("GET /api/files/{id}", s.getFile)
	s.handle("GET /api/files/{id}/download", s.downloadFile)
	s.handle("GET /api/files/{id}/preview", s.previewFile)
}

// fileError answers a failed read of a file: no such version is a 404 in one sentence.
func (s *Server) fileError(w http.ResponseWriter, r *http.Request, id string, err error) {
	if errors.Is(err, artifact.ErrNotFound) {
		writeError(w, http.StatusNotFound, "there is no file "+id+": the Files page lists the ones kept")
		return
	}
	s.answer(w, r, err, nil)
}

// listFiles is GET /api/files?agent=…&name=…: the latest version of each file, newest first,
// with how many versions it has.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	list, err := s.deps.Files.List(r.Context(), artifact.Filter{Agent: q.Get("agent"), Name: q.Get("name"), Limit: filesShown + 1})
	if err != nil {
		s.answer(w, r, err, nil)
		return
	}
	truncated := len(list) > filesShown
	if truncated {
		list = list[:filesShown]
	}
	if list == nil {
		list = []artifact.Artifact{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": list, "truncated": truncated})
}

// getFile is GET /api/files/{id}: the version and every version of its file.
func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	versions, err := s.deps.Files.Versions(r.Context(), id)
	if err != nil {
		s.fileError(w, r, id, err)
		return
	}
	var this artifact.Artifact
	for _, v := range versions {
		if v.ID == id {
			this = v
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"file": this, "versions": versions, "previewable": previewable(this)})
}

// previewable reports whether a version is shown inline: an image of a safe type, or text.
func previewable(a artifact.Artifact) bool {
	return previewImages[baseType(a.MediaType)] || artifact.Textual(a.MediaType)
}

// baseType is a media type without its parameters, or "" when it does not parse.
func baseType(mediaType string) string {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return ""
	}
	return mt
}

// fileHeaders are every file response's: never sniffed, never a page of the dashboard's
// origin (no script, no style, no frame), kept private.
func fileHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "private, no-store")
}

// downloadFile is GET /api/files/{id}/download: the version's bytes as an attachment, typed
// application/octet-stream whatever was recorded, so a browser saves it and renders nothing
// (an agent's HTML never runs on the dashboard's origin).
func (s *Server) downloadFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, data, err := s.deps.Files.Open(r.Context(), id)
	if err != nil {
		s.fileError(w, r, id, err)
		return
	}
	fileHeaders(w)
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": a.Name})
	if disposition == "" {
		disposition = "attachment"
	}
	w.Header().Set("Content-Disposition", disposition)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("X-Buddi-SHA256", a.SHA256)
	_, _ = w.Write(data)
}

// previewFile is GET /api/files/{id}/preview: a raster image with its own type, or text as
// text/plain with stored secrets replaced (at most MaxPreviewText bytes, cut on a character);
// anything else is refused in a sentence, to be downloaded instead.
func (s *Server) previewFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, data, err := s.deps.Files.Open(r.Context(), id)
	if err != nil {
		s.fileError(w, r, id, err)
		return
	}
	mt := baseType(a.MediaType)
	switch {
	case previewImages[mt]:
		fileHeaders(w)
		w.Header().Set("Content-Type", mt)
		w.Header().Set("Content-Disposition", "inline")
	case artifact.Textual(a.MediaType) && utf8.Valid(data):
		// Scrubbed whole before the cut, so a secret the cut would split is never half shown.
		if s.deps.FilesScrub != nil {
			data = s.deps.FilesScrub.Bytes(data)
		}
		if len(data) > MaxPreviewText {
			end := MaxPreviewText
			for end > 0 && !utf8.RuneStart(data[end]) {
				end--
			}
			data = data[:end]
			w.Header().Set("X-Buddi-Truncated", "1")
		}
		fileHeaders(w)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Disposition", "inline")
	default:
		writeError(w, http.StatusUnsupportedMediaType, a.Name+" ("+a.MediaType+") is not an image or text that can be shown here: download it instead")
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}
