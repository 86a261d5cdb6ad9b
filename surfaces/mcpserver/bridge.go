package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"buddi/version"
)

// Bridge serves MCP on in and out (the stdio of `buddi mcp`, a process the client starts)
// and carries every tool call to the running buddi's endpoint (http://127.0.0.1:4317/mcp)
// with token, the command line's: the tools, their answers and every rule are the
// endpoint's, so both transports behave alike. It returns when the client hangs up or ctx
// ends.
func Bridge(ctx context.Context, endpoint, token string, in io.ReadCloser, out io.WriteCloser, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	httpc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "buddi mcp", Version: version.Version}, nil)
	up, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return fmt.Errorf("buddi does not answer at %s (is buddi serve running, with the same BUDDI_HOME?): %w", endpoint, err)
	}
	defer up.Close()
	var tools []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for {
		page, err := up.ListTools(ctx, params)
		if err != nil {
			return fmt.Errorf("list buddi's tools: %w", err)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			break
		}
		params.Cursor = page.NextCursor
	}
	opts := &mcp.ServerOptions{Logger: sdkLog(log)}
	if init := up.InitializeResult(); init != nil {
		opts.Instructions = init.Instructions
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "buddi", Version: version.Version}, opts)
	for _, t := range tools {
		srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args any
			if len(req.Params.Arguments) > 0 {
				args = json.RawMessage(req.Params.Arguments)
			}
			return up.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: args})
		})
	}
	return srv.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

// bearer adds the token to every request it carries.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
