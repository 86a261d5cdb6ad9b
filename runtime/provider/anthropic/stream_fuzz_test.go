package anthropic

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"buddi/runtime/provider"
)

const sampleStream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}

event: ping
data: {"type":"ping"}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"developer__run","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"ls\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}

event: message_stop
data: {"type":"message_stop"}

`

// parse runs the adapter's stream reading (the SDK's SSE decoder and this package's
// assembly) over raw bytes.
func parse(data []byte) (provider.Result, []provider.Event, error) {
	resp := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(data)),
		Request:    httptest.NewRequest(http.MethodPost, "https://api.anthropic.com/v1/messages", nil),
	}
	stream := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(resp), nil)
	defer stream.Close()
	names, _ := provider.NewToolNames()
	var events []provider.Event
	res, err := readStream(stream, names, func(e provider.Event) { events = append(events, e) })
	return res, events, err
}

func TestReadStreamSample(t *testing.T) {
	t.Parallel()
	res, events, err := parse([]byte(sampleStream))
	if err != nil {
		t.Fatal(err)
	}
	calls := res.ToolCalls()
	if res.Text() != "Hi" || len(calls) != 1 || calls[0].Name != "developer.run" || string(calls[0].Args) != `{"cmd":"ls"}` {
		t.Errorf("result = %+v", res)
	}
	if res.Usage.OutputTokens != 9 || res.StopReason != provider.StopToolUse || len(events) != 7 {
		t.Errorf("usage %+v, stop %q, %d events", res.Usage, res.StopReason, len(events))
	}
}

func TestReadStreamTruncated(t *testing.T) {
	t.Parallel()
	for _, cut := range []int{0, 100, len(sampleStream) - 40} {
		_, _, err := parse([]byte(sampleStream[:cut]))
		if provider.Classify(err) == provider.Permanent || err == nil {
			t.Errorf("cut at %d: err = %v, want a non-permanent failure", cut, err)
		}
	}
}

// FuzzReadStream feeds arbitrary bytes to the SSE decoding and event assembly: they may
// fail, never panic, and a success always has a stop reason and well-formed tool calls.
func FuzzReadStream(f *testing.F) {
	f.Add([]byte(sampleStream))
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"x\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"input_json_delta\"}}\n\n"))
	f.Add([]byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte(":comment\r\n\r\ndata:\ndata:\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, _, err := parse(data)
		if err != nil {
			return
		}
		if res.RawStopReason == "" && res.StopReason != provider.StopOther {
			t.Fatalf("success without a stop reason: %+v", res)
		}
		for _, c := range res.ToolCalls() {
			if len(c.Args) == 0 || c.Args[0] != '{' {
				t.Fatalf("tool call with arguments %q", c.Args)
			}
		}
	})
}
