package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"buddi/plugins"
	"buddi/version"
)

// Session is a live connection to one plugin's server, initialised.
type Session struct {
	cs  *mcp.ClientSession
	cmd *exec.Cmd // the stdio server's process; nil for a URL plugin
}

// ConnectOptions tune Connect; the zero value works.
type ConnectOptions struct {
	// Stderr receives the stdio server's standard error. Nil discards it.
	Stderr io.Writer
	// KeepAlive pings a URL plugin this often; a failed ping ends the session. Zero: 15 s.
	KeepAlive time.Duration
}

// baseEnv are the variables of buddi's environment a stdio server gets; nothing else of
// buddi's environment reaches it.
var baseEnv = []string{"PATH", "HOME", "USER", "LANG", "TMPDIR"}

// CheckURL refuses a plugin URL that is not http(s) on a loopback address.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the plugin's URL %q does not parse: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("the plugin's URL %q is not http or https", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("the plugin's URL %q is not on this machine's loopback (127.0.0.1, ::1 or localhost): buddi speaks to an installed plugin on loopback only", raw)
}

// Connect starts the plugin's server (or reaches its URL) and initialises a session. ctx
// bounds the start and the initialisation only; the session lives until Close.
func Connect(ctx context.Context, p Plugin, opts ConnectOptions) (*Session, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "buddi", Version: version.Version}, &mcp.ClientOptions{KeepAlive: keepAlive(p, opts)})
	var t mcp.Transport
	var cmd *exec.Cmd
	switch {
	case p.URL != "":
		if err := CheckURL(p.URL); err != nil {
			return nil, err
		}
		t = &mcp.StreamableClientTransport{Endpoint: p.URL, HTTPClient: &http.Client{}, MaxRetries: -1}
	case len(p.Command) > 0:
		cmd = exec.Command(p.Command[0], p.Command[1:]...)
		cmd.Dir = p.Dir
		for _, k := range baseEnv {
			if v, ok := os.LookupEnv(k); ok {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
		}
		cmd.Env = append(cmd.Env, p.Env...)
		cmd.Stderr = opts.Stderr
		// Should buddi die without closing the session (a crash, SIGKILL), the server dies with
		// it instead of running on unowned; a start after it spawns a fresh one.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}
	default:
		return nil, fmt.Errorf("plugin %s has neither a command nor a URL", p.Name)
	}
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return nil, fmt.Errorf("start plugin %s (%s) and initialise it: %w", p.Name, p.Transport(), err)
	}
	return &Session{cs: cs, cmd: cmd}, nil
}

func keepAlive(p Plugin, opts ConnectOptions) time.Duration {
	if p.URL == "" {
		return 0 // a stdio server's exit ends the session by itself
	}
	if opts.KeepAlive > 0 {
		return opts.KeepAlive
	}
	return 15 * time.Second
}

// Server is the server's name and version from its initialisation.
func (s *Session) Server() (name, version string) {
	if r := s.cs.InitializeResult(); r != nil && r.ServerInfo != nil {
		return r.ServerInfo.Name, r.ServerInfo.Version
	}
	return "", ""
}

// Pid is the stdio server's process id, 0 for a URL plugin.
func (s *Session) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Listed is one tool as the server lists it now.
type Listed struct {
	// Name is the server's name for it.
	Name string
	// Description is the server's description.
	Description string
	// Schema is its input schema.
	Schema json.RawMessage
	// SchemaHash is SchemaHash(Schema).
	SchemaHash string
}

// Tools lists the server's tools, every page.
func (s *Session) Tools(ctx context.Context) ([]Listed, error) {
	var out []Listed
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list the plugin's tools: %w", err)
		}
		raw, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("list the plugin's tools: the schema of %s: %w", t.Name, err)
		}
		out = append(out, Listed{Name: t.Name, Description: t.Description, Schema: raw, SchemaHash: SchemaHash(raw)})
	}
	return out, nil
}

// Call calls the MCP tool name with args. A result the server marks as an error is a
// tool-error (the Go error carries its text); a protocol failure is an error too.
func (s *Session) Call(ctx context.Context, name string, args json.RawMessage) (plugins.Result, error) {
	var a map[string]any
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return plugins.Result{}, fmt.Errorf("the arguments of %s are not a JSON object: %w", name, err)
		}
	}
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
	if err != nil {
		return plugins.Result{}, fmt.Errorf("call %s: %w", name, err)
	}
	text := resultText(res)
	var data json.RawMessage
	if res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			data = raw
		}
	}
	if res.IsError {
		if text == "" {
			text = name + " failed without saying why"
		}
		return plugins.Result{Text: text, Data: data, IsError: true}, &ToolError{Tool: name, Text: text}
	}
	return plugins.Result{Text: text, Data: data}, nil
}

// ToolError is a call the server answered with isError: a tool-error, never a success.
type ToolError struct {
	// Tool is the MCP tool's name.
	Tool string
	// Text is what the server said.
	Text string
}

// Error says what the server said.
func (e *ToolError) Error() string { return e.Tool + ": " + e.Text }

// resultText joins the result's text content; other content is named.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[an image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[a resource: %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[a resource: %s]", c.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(raw))
		}
	}
	return strings.Join(parts, "\n")
}

// Wait returns when the session ends: the server exited or the connection broke.
func (s *Session) Wait() error {
	err := s.cs.Wait()
	if s.cmd != nil {
		if st := s.cmd.ProcessState; st != nil && !st.Success() {
			return fmt.Errorf("the server exited (%s)", st)
		}
	}
	if err == nil || errors.Is(err, io.EOF) {
		return errors.New("the server closed the connection")
	}
	return fmt.Errorf("the connection to the server broke: %w", err)
}

// Close ends the session: a stdio server has its input closed, then is terminated.
func (s *Session) Close() error {
	return s.cs.Close()
}
