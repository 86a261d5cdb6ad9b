package openai

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"buddi/runtime/provider"
)

const sampleStream = `data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-5","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"developer__run","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"x","arguments":"{}"}}]},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"cmd\":"}}]},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]},"finish_reason":null}]}

data: {"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}

data: [DONE]

`

// parse runs the adapter's stream reading (the SDK's SSE decoder and this package's
// assembly) over raw bytes.
func parse(data []byte) (provider.Result, []provider.Event, error) {
	resp := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(data)),
	}
	stream := ssestream.NewStream[sdk.ChatCompletionChunk](ssestream.NewDecoder(resp), nil)
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
	if res.Text() != "Hi" || len(calls) != 2 || calls[0].Name != "developer.run" || string(calls[0].Args) != `{"cmd":"ls"}` || calls[1].ID != "call_2" {
		t.Errorf("result = %+v", res)
	}
	if res.Usage.InputTokens != 5 || res.StopReason != provider.StopToolUse || len(events) != 10 {
		t.Errorf("usage %+v, stop %q, %d events", res.Usage, res.StopReason, len(events))
	}
}

func TestReadStreamWithoutFinish(t *testing.T) {
	t.Parallel()
	cut := bytes.Index([]byte(sampleStream), []byte(`"finish_reason":"tool_calls"`))
	cut = bytes.LastIndex([]byte(sampleStream[:cut]), []byte("\n\n")) + 2
	_, _, err := parse([]byte(sampleStream[:cut]))
	if pe, ok := err.(*provider.Error); !ok || pe.Kind != provider.KindStreamDropped {
		t.Errorf("err = %v, want a dropped stream", err)
	}
}

// FuzzReadStream feeds arbitrary bytes to the SSE decoding and chunk assembly: they may
// fail, never panic, and a success always has a finish reason and well-formed tool calls.
func FuzzReadStream(f *testing.F) {
	f.Add([]byte(sampleStream))
	f.Add([]byte("data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-5,\"function\":{\"arguments\":\"[\"}}]},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: [DONE]\n\n"))
	f.Add([]byte(":keepalive\r\n\r\ndata:\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, _, err := parse(data)
		if err != nil {
			return
		}
		if res.RawStopReason == "" {
			t.Fatalf("success without a finish reason: %+v", res)
		}
		for _, c := range res.ToolCalls() {
			if c.ID == "" || c.Name == "" || len(c.Args) == 0 || c.Args[0] != '{' {
				t.Fatalf("malformed tool call %+v", c)
			}
		}
	})
}
