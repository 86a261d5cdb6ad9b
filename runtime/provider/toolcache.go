package provider

import (
	"encoding/json"
	"sync"
)

// toolCacheSize bounds the encoded tools a ToolCache keeps: far more than the tools of
// every agent together.
const toolCacheSize = 4096

// ToolCache keeps each tool's wire JSON by its wire name, description and schema: a run's
// every step offers the same tools, and decoding and encoding their schemas again was most
// of the cost of building a request. The zero value is ready; it is safe for concurrent
// use. Past its bound it starts again empty.
type ToolCache struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

// Encoded returns t's wire JSON under the wire name wire, made by encode the first time
// and kept; an error from encode is returned and nothing is kept.
func (c *ToolCache) Encoded(wire string, t Tool, encode func() (json.RawMessage, error)) (json.RawMessage, error) {
	key := wire + "\x00" + t.Description + "\x00" + string(t.Schema)
	c.mu.Lock()
	b, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := encode()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= toolCacheSize {
		c.m = make(map[string]json.RawMessage)
	}
	c.m[key] = b
	c.mu.Unlock()
	return b, nil
}
