// Package telegramtest is a Bot API server on loopback for tests: it speaks the real JSON
// shapes (getMe, getUpdates with long polling, sendMessage, editMessageText,
// answerCallbackQuery, setMyCommands), queues updates, records every call, and can answer a
// call with an error or never answer a poll.
package telegramtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token is the bot token the server accepts.
const Token = "123456:TEST-token-telegramtest"

// Call is one recorded API call.
type Call struct {
	Method string         // the Bot API method
	Params map[string]any // its JSON parameters
	At     time.Time      // when it arrived
}

// Server is the fake Bot API.
type Server struct {
	URL string // the base URL to give the bot (BUDDI_TELEGRAM_API_URL)

	mu      sync.Mutex
	updates []json.RawMessage
	calls   []Call
	errs    map[string][]string // method → queued raw error answers
	stall   int                 // polls to accept and never answer
	wake    chan struct{}
	nextMsg int64
	closed  chan struct{}
	files   map[string][]byte // file_id → bytes, for getFile and the file URL
}

// New starts the server; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{errs: map[string][]string{}, wake: make(chan struct{}, 1), nextMsg: 100, closed: make(chan struct{}), files: map[string][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = srv.URL
	t.Cleanup(func() { close(s.closed); srv.Close() })
	return s
}

// Push queues an update (its update_id is the caller's).
func (s *Server) Push(update any) {
	b, _ := json.Marshal(update)
	s.mu.Lock()
	s.updates = append(s.updates, b)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// File makes a file downloadable under id.
func (s *Server) File(id string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[id] = data
}

// FailNext answers the next call of method with the raw error JSON.
func (s *Server) FailNext(method, raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs[method] = append(s.errs[method], raw)
}

// StallPolls makes the next n getUpdates calls hang until the client gives up.
func (s *Server) StallPolls(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall += n
}

// Calls returns the calls of method so far ("" for all).
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"+Token+"/files/"); ok {
		s.mu.Lock()
		f, found := s.files[rest]
		s.mu.Unlock()
		if !found {
			http.NotFound(w, r)
			return
		}
		w.Write(f)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/bot")
	token, method, ok := strings.Cut(path, "/")
	w.Header().Set("Content-Type", "application/json")
	if !ok || token != Token {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	params := map[string]any{}
	_ = json.Unmarshal(raw, &params)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Params: params, At: time.Now()})
	if q := s.errs[method]; len(q) > 0 {
		s.errs[method] = q[1:]
		s.mu.Unlock()
		io.WriteString(w, q[0])
		return
	}
	s.mu.Unlock()
	switch method {
	case "getMe":
		io.WriteString(w, `{"ok":true,"result":{"id":123456,"is_bot":true,"first_name":"buddi","username":"test_buddi_bot"}}`)
	case "getUpdates":
		s.getUpdates(w, r, params)
	case "getFile":
		id, _ := params["file_id"].(string)
		s.mu.Lock()
		f, ok := s.files[id]
		s.mu.Unlock()
		if !ok {
			io.WriteString(w, `{"ok":false,"error_code":400,"description":"Bad Request: invalid file_id"}`)
			return
		}
		b, _ := json.Marshal(map[string]any{"ok": true, "result": map[string]any{"file_id": id, "file_size": len(f), "file_path": "files/" + id}})
		w.Write(b)
	case "sendMessage":
		s.mu.Lock()
		s.nextMsg++
		id := s.nextMsg
		s.mu.Unlock()
		chat := params["chat_id"]
		b, _ := json.Marshal(map[string]any{"ok": true, "result": map[string]any{"message_id": id, "chat": map[string]any{"id": chat, "type": "private"}, "text": params["text"]}})
		w.Write(b)
	default:
		io.WriteString(w, `{"ok":true,"result":true}`)
	}
}

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, params map[string]any) {
	s.mu.Lock()
	if s.stall > 0 {
		s.stall--
		s.mu.Unlock()
		select { // accepted, never answered
		case <-r.Context().Done():
		case <-s.closed:
		}
		return
	}
	s.mu.Unlock()
	offset, _ := params["offset"].(float64)
	timeout, _ := params["timeout"].(float64)
	deadline := time.After(time.Duration(timeout * float64(time.Second)))
	for {
		s.mu.Lock()
		var out []json.RawMessage
		for _, u := range s.updates {
			var id struct {
				UpdateID float64 `json:"update_id"`
			}
			_ = json.Unmarshal(u, &id)
			if id.UpdateID >= offset {
				out = append(out, u)
			}
		}
		s.mu.Unlock()
		if len(out) > 0 {
			b, _ := json.Marshal(map[string]any{"ok": true, "result": out})
			w.Write(b)
			return
		}
		select {
		case <-s.wake:
		case <-deadline:
			io.WriteString(w, `{"ok":true,"result":[]}`)
			return
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}
}
