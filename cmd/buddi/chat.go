package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"buddi/config"
	"buddi/core/views"
	"buddi/runtime/live"
	"buddi/surfaces/webauth"
)

// chatClient talks to the running server over its local API, with the command line's
// bearer token (a 0600 file in the data directory).
type chatClient struct {
	base  string // http://127.0.0.1:4317
	token string // the command line's token
	http  *http.Client
}

func newChatClient() (*chatClient, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	return dialServer(cfg)
}

// dialServer returns a client of the buddi serving for cfg, checked with one call.
func dialServer(cfg config.Config) (*chatClient, error) {
	token, err := webauth.ReadCLIToken(cfg.Home)
	if errors.Is(err, os.ErrNotExist) { // never started with this home
		return nil, notRunning()
	}
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	if err := webauth.CheckListener(cfg.WebAddr()); err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	c := &chatClient{base: "http://" + cfg.WebAddr(), token: token, http: &http.Client{Timeout: 30 * time.Second}}
	req, _ := http.NewRequest("GET", c.base+"/api/session", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, notRunning()
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, &exitError{code: 3, err: fmt.Errorf("the buddi at %s refused this command line's token: run the command with the BUDDI_HOME that buddi serve uses", cfg.WebAddr())}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &exitError{code: 1, err: fmt.Errorf("%s answers %s: is it buddi?", cfg.WebAddr(), resp.Status)}
	}
	return c, nil
}

func (c *chatClient) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return &exitError{code: 3, err: fmt.Errorf("buddi stopped answering: %w", err)}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	// /api/health answers 503 when buddi is degraded, with the report as its body.
	degraded := resp.StatusCode == http.StatusServiceUnavailable && path == "/api/health"
	if resp.StatusCode >= 300 && !degraded {
		var e struct{ Error string }
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return &exitError{code: 1, err: errors.New(e.Error)}
		}
		return &exitError{code: 1, err: fmt.Errorf("%s %s: %s", method, path, resp.Status)}
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

type sentJSON struct {
	Conversation struct {
		ID    string `json:"id"`
		Agent string `json:"agent"`
	} `json:"conversation"`
	RunID  string `json:"run_id"`
	Joined bool   `json:"joined"`
	Ended  *struct {
		CarriedOver string `json:"carried_over"`
	} `json:"ended"`
	Agent struct {
		Handle string `json:"handle"`
	} `json:"agent"`
}

func (c *chatClient) send(agent, conv string, resume, fresh bool, text string) (sentJSON, error) {
	var s sentJSON
	err := c.do("POST", "/api/messages", map[string]any{"agent": agent, "conversation_id": conv, "resume": resume, "new": fresh,
		"surface": "terminal", "text": text}, &s)
	return s, err
}

// turnResult is what one turn showed.
type turnResult struct {
	ConversationID string     `json:"conversation_id"`
	RunID          string     `json:"run_id"`
	Status         string     `json:"status"` // finished, failed, waiting
	Text           string     `json:"text"`
	ToolCalls      []toolEcho `json:"tool_calls"`
	Sentence       string     `json:"sentence,omitempty"`
	Retry          bool       `json:"retry,omitempty"`
	Pending        []string   `json:"pending_approvals,omitempty"`
}

type toolEcho struct {
	Tool    string `json:"tool"`
	Args    string `json:"args,omitempty"`
	Result  string `json:"result,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
}

// follow watches run's events until it finishes or fails, printing as they come (unless
// quiet). An approval card is answered from answers with a or r; without an answer the
// action stays pending and follow returns status waiting.
func (c *chatClient) follow(ctx context.Context, conv, runID string, out, errOut io.Writer, answers *bufio.Scanner, quiet bool) (turnResult, error) {
	res := turnResult{ConversationID: conv, RunID: runID, ToolCalls: []toolEcho{}}
	u, _ := url.Parse(c.base)
	u.Scheme = "ws"
	u.Path = "/api/conversations/" + conv + "/live"
	u.RawQuery = "run=" + url.QueryEscape(runID)
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, u.String(), http.Header{"Authorization": {"Bearer " + c.token}})
	if err != nil {
		return res, &exitError{code: 3, err: fmt.Errorf("watch the conversation: %w", err)}
	}
	defer ws.Close()
	var text strings.Builder
	for {
		var ev live.Event
		if err := ws.ReadJSON(&ev); err != nil {
			return res, &exitError{code: 1, err: fmt.Errorf("the live stream ended before the reply did: %w", err)}
		}
		if ev.RunID != runID {
			continue
		}
		switch ev.Type {
		case "text":
			text.WriteString(ev.Text)
			if !quiet {
				fmt.Fprint(out, ev.Text)
			}
		case "run.waiting": // the provider asked buddi to wait: say so, and until when
			if !quiet {
				fmt.Fprintf(errOut, "\n(%s)\n", ev.Text)
			}
		case "run.retrying": // the attempt broke off: its text is void, the next one starts anew
			text.Reset()
			if !quiet {
				fmt.Fprintf(errOut, "\n(%s)\n", ev.Text)
			}
		case "tool.call":
			res.ToolCalls = append(res.ToolCalls, toolEcho{Tool: ev.Tool, Args: ev.Args})
			if !quiet {
				fmt.Fprintf(errOut, "\n→ %s %s\n", ev.Tool, ev.Args)
			}
		case "tool.result":
			for i := len(res.ToolCalls) - 1; i >= 0; i-- {
				if res.ToolCalls[i].Tool == ev.Tool && res.ToolCalls[i].Result == "" {
					res.ToolCalls[i].Result, res.ToolCalls[i].IsError = ev.Text, ev.IsError
					break
				}
			}
			if !quiet {
				mark := "✓"
				if ev.IsError {
					mark = "✗"
				}
				fmt.Fprintf(errOut, "%s %s: %s\n", mark, ev.Tool, firstLineOf(ev.Text, 160))
				if text := viewText(ev.View); text != "" { // no canvas here: its view as text
					fmt.Fprintln(errOut, text)
				}
			}
		case "approval":
			fmt.Fprintf(errOut, "\n┌ approval needed: %s\n", ev.Text)
			if ev.Preview != "" {
				for _, l := range strings.Split(strings.TrimRight(ev.Preview, "\n"), "\n") {
					fmt.Fprintf(errOut, "│ %s\n", l)
				}
			}
			decided := false
			for !decided {
				fmt.Fprint(errOut, "└ [a]pprove or [r]eject? ")
				if answers == nil || !answers.Scan() {
					fmt.Fprintf(errOut, "\nleft pending: decide with `buddi approvals approve %s` or `buddi approvals reject %s`\n", ev.ActionID, ev.ActionID)
					res.Status, res.Text = "waiting", text.String()
					res.Pending = append(res.Pending, ev.ActionID)
					return res, nil
				}
				switch strings.ToLower(strings.TrimSpace(answers.Text())) {
				case "a", "approve", "y", "yes":
					err = c.do("POST", "/api/approvals/"+ev.ActionID+"/approve", map[string]any{}, nil)
					decided = true
				case "r", "reject", "n", "no":
					err = c.do("POST", "/api/approvals/"+ev.ActionID+"/reject", map[string]any{}, nil)
					decided = true
				}
				if err != nil {
					fmt.Fprintln(errOut, err)
				}
			}
		case "run.finished":
			res.Status, res.Text = "finished", text.String()
			if !quiet {
				fmt.Fprintln(out)
			}
			return res, nil
		case "run.failed":
			res.Status, res.Text, res.Sentence, res.Retry = "failed", text.String(), ev.Text, ev.Retry
			if !quiet {
				fmt.Fprintln(out)
				fmt.Fprintln(errOut, ev.Text)
				if ev.Retry {
					fmt.Fprintln(errOut, "(type /retry to try again)")
				}
			}
			return res, nil
		}
	}
}

func firstLineOf(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

type askCmd struct {
	Text  string `arg:"" help:"What to ask."`
	Agent string `help:"The agent's handle (@dev) or id; default: the default agent."`
	JSON  bool   `help:"Print the reply and its tool calls as JSON when the turn ends."`
}

func (c askCmd) Run(env *runEnv) error {
	cl, err := newChatClient()
	if err != nil {
		return err
	}
	sent, err := cl.send(c.Agent, "", false, false, c.Text)
	if err != nil {
		return err
	}
	if sent.Ended != nil && !c.JSON {
		fmt.Fprintln(env.stderr, sent.Ended.CarriedOver)
	}
	res, err := cl.follow(env.ctx, sent.Conversation.ID, sent.RunID, env.stdout, env.stderr, bufio.NewScanner(os.Stdin), c.JSON)
	if err != nil {
		return err
	}
	if c.JSON {
		if err := writeJSON(env, res); err != nil {
			return err
		}
	}
	if res.Status == "failed" {
		return &exitError{code: 1}
	}
	return nil
}

type chatCmd struct {
	Agent  string `help:"The agent's handle (@dev) or id; default: the default agent."`
	Resume string `help:"Carry on the conversation with this id." xor:"resume"`
	Last   bool   `help:"Carry on the latest conversation." xor:"resume"`
}

const chatHelp = `Type a message and press Enter; the reply streams in.
  a / r      answer an approval card (approve / reject)
  /retry     send your last message again (offered after a failure that a retry can help)
  /new       start a new conversation
  /help      this help
  /quit      leave (Ctrl-D works too)`

func (c chatCmd) Run(env *runEnv) error {
	cl, err := newChatClient()
	if err != nil {
		return err
	}
	conv, resume := c.Resume, c.Resume != ""
	if c.Last {
		var list struct {
			Conversations []struct {
				ID string `json:"id"`
			} `json:"conversations"`
		}
		if err := cl.do("GET", "/api/conversations?limit=1&agent="+url.QueryEscape(c.Agent), nil, &list); err != nil {
			return err
		}
		if len(list.Conversations) == 0 {
			return &exitError{code: 1, err: errors.New("there is no conversation to carry on: start one with `buddi chat`")}
		}
		conv, resume = list.Conversations[0].ID, true
	}
	if conv != "" {
		var got struct {
			Transcript []json.RawMessage `json:"transcript"`
		}
		if err := cl.do("GET", "/api/conversations/"+url.PathEscape(conv), nil, &got); err != nil {
			return err
		}
		fmt.Fprintf(env.stderr, "carrying on conversation %s (%d entries)\n", conv, len(got.Transcript))
	}
	fmt.Fprintln(env.stderr, "buddi chat: /help for help, /quit to leave")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	var last string
	agent, fresh := c.Agent, false
	for {
		fmt.Fprint(env.stderr, "> ")
		if !in.Scan() {
			fmt.Fprintln(env.stderr)
			return nil
		}
		line := strings.TrimSpace(in.Text())
		switch {
		case line == "":
			continue
		case line == "/quit" || line == "/exit":
			return nil
		case line == "/help":
			fmt.Fprintln(env.stderr, chatHelp)
			continue
		case line == "/new":
			conv, resume, fresh = "", false, true
			fmt.Fprintln(env.stderr, "the next message starts a new conversation")
			continue
		case line == "/retry":
			if last == "" {
				fmt.Fprintln(env.stderr, "nothing to retry yet")
				continue
			}
			line = last
		case strings.HasPrefix(line, "/"):
			fmt.Fprintf(env.stderr, "unknown command %s: /help lists them\n", strings.Fields(line)[0])
			continue
		}
		last = line
		sent, err := cl.send(agent, conv, resume, fresh, line)
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) && ee.code == 3 {
				return err
			}
			fmt.Fprintln(env.stderr, err)
			continue
		}
		if sent.Ended != nil {
			fmt.Fprintln(env.stderr, sent.Ended.CarriedOver)
		}
		conv, resume, fresh, agent = sent.Conversation.ID, false, false, sent.Agent.Handle
		if sent.Joined {
			fmt.Fprintln(env.stderr, "(added to the reply in progress)")
		}
		if _, err := cl.follow(env.ctx, sent.Conversation.ID, sent.RunID, env.stdout, env.stderr, in, false); err != nil {
			return err
		}
	}
}

// viewText is a tool answer's canvas view degraded for the terminal, which has no canvas: a
// table as aligned lines, a record as "key: value" lines, a diff as an indented block. ""
// for a document or terminal text (the answer's first line is shown already), a failure, or
// no view.
func viewText(view json.RawMessage) string {
	var v views.View
	if len(view) == 0 || json.Unmarshal(view, &v) != nil || v.Failed {
		return ""
	}
	switch v.Renderer {
	case views.Table, views.KeyValue, views.Bars, views.Timeseries, views.Diff, views.Preview:
		return views.Text(&v, false)
	}
	return ""
}
