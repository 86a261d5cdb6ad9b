// Command server is a tiny MCP server over stdio for the tests of package mcp: echo (the
// manifest makes it auto), note (gated: it appends to the file NOTES names), fail (answers
// with a tool error), crash (exits mid-call) and Weird-Name.v2 (a name to sanitise).
// TEST_VARIANT=changed changes echo's arguments, drops note and adds extra; TEST_EXIT_AT_START
// makes it exit before it answers anything.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"what to say back"`
}

type loudArgs struct {
	Text string `json:"text" jsonschema:"what to say back"`
	Loud bool   `json:"loud,omitempty" jsonschema:"shout it"`
}

type noteArgs struct {
	Note string `json:"note" jsonschema:"the line to keep"`
}

type none struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	if os.Getenv("TEST_EXIT_AT_START") != "" {
		fmt.Fprintln(os.Stderr, "exiting at start, as asked")
		os.Exit(2)
	}
	changed := os.Getenv("TEST_VARIANT") == "changed"
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1.2.3"}, nil)
	if changed {
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Say the text back."}, func(_ context.Context, _ *mcp.CallToolRequest, a loudArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
		mcp.AddTool(s, &mcp.Tool{Name: "extra", Description: "A tool added by an upgrade."}, func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return text("extra"), nil, nil
		})
	} else {
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Say the text back."}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
		mcp.AddTool(s, &mcp.Tool{Name: "note", Description: "Keep a line in the notes file."}, func(_ context.Context, _ *mcp.CallToolRequest, a noteArgs) (*mcp.CallToolResult, any, error) {
			f, err := os.OpenFile(os.Getenv("NOTES"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return nil, nil, err
			}
			defer f.Close()
			if _, err := fmt.Fprintln(f, a.Note); err != nil {
				return nil, nil, err
			}
			return text("kept"), nil, nil
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."}, func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("it failed on purpose")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits in the middle of the call."}, func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "Weird-Name.v2", Description: "A name buddi must sanitise."}, func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		return text("weird"), nil, nil
	})
	err := s.Run(context.Background(), &mcp.StdioTransport{})
	if os.Getenv("TEST_LINGER") != "" {
		// A careless server: it runs on after its stdin closed, until a signal ends it.
		select {}
	}
	if err != nil {
		log.Fatal(err)
	}
}
