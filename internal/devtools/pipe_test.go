package devtools_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"buddi/internal/devtools"
)

// TestACallToABrowserWhosePipeIsGoneIsClosed: a command written to a pipe the browser no
// longer reads (it exited before the reader saw its end) is ErrClosed, as when the reader
// saw it first.
func TestACallToABrowserWhosePipeIsGoneIsClosed(t *testing.T) {
	fromBrowser, browserWrites, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer browserWrites.Close() // kept open: the reader sees no end
	browserReads, toBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	browserReads.Close() // the browser is gone: a write finds no reader
	c := devtools.NewConn(fromBrowser, toBrowser)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Call(ctx, "", "Target.createTarget", nil, nil); !errors.Is(err, devtools.ErrClosed) {
		t.Fatalf("err = %v, want one matching ErrClosed", err)
	}
}
