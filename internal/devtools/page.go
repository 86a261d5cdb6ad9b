package devtools

import (
	"context"
	"encoding/json"
	"fmt"
)

// Page is a tab of the browser, attached in a session of its own.
type Page struct {
	b       *Browser
	target  string
	session string
}

// NewPage opens a blank tab and attaches to it.
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &created); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	return &Page{b: b, target: created.TargetID, session: attached.SessionID}, nil
}

// Call sends the command method to the page's session; see Conn.Call.
func (p *Page) Call(ctx context.Context, method string, params, result any) error {
	return p.b.call(ctx, p.session, method, params, result)
}

// Subscribe returns the page's events named methods; see Conn.Subscribe.
func (p *Page) Subscribe(methods ...string) *Subscription {
	return p.b.conn.Subscribe(p.session, methods...)
}

// SetViewport makes the page's window width × height CSS pixels, one device pixel each,
// without touch.
func (p *Page) SetViewport(ctx context.Context, width, height int) error {
	if err := p.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false,
	}, nil); err != nil {
		return err
	}
	return p.Call(ctx, "Emulation.setTouchEmulationEnabled", map[string]any{"enabled": false}, nil)
}

// NavigateError is a navigation the browser could not make: no answer from the server, a
// refused connection, an address it cannot resolve.
type NavigateError struct {
	// URL is the address asked for.
	URL string
	// Text is the browser's reason, such as "net::ERR_CONNECTION_REFUSED".
	Text string
}

// Error names the address and the browser's reason.
func (e *NavigateError) Error() string { return "the browser could not load " + e.URL + ": " + e.Text }

// Navigate loads url in the page and waits for the load event (the document and what it
// loads: images, stylesheets, frames) of the document it shows, or for ctx to end. When
// the page moves on to another document before its own has loaded (a script that sets
// location as it is parsed), the load awaited is the last document's.
func (p *Page) Navigate(ctx context.Context, url string) error {
	if err := p.Call(ctx, "Page.enable", nil, nil); err != nil {
		return err
	}
	if err := p.Call(ctx, "Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}, nil); err != nil {
		return err
	}
	events := p.Subscribe("Page.frameNavigated", "Page.lifecycleEvent")
	defer events.Close()
	var nav struct {
		FrameID   string `json:"frameId"`
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	if err := p.Call(ctx, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return &NavigateError{URL: url, Text: nav.ErrorText}
	}
	if nav.LoaderID == "" { // a move within the document: nothing is loaded
		return nil
	}
	// Each document of the page has its own loader: the blank one before this navigation
	// does not count, the one this navigation made does, and so does every one the page
	// moved on to after it.
	current, ours := nav.LoaderID, false
	for {
		ev, err := events.Next(ctx)
		if err != nil {
			return fmt.Errorf("wait for %s to load: %w", url, err)
		}
		switch ev.Method {
		case "Page.frameNavigated":
			var e struct {
				Frame struct {
					ID       string `json:"id"`
					LoaderID string `json:"loaderId"`
				} `json:"frame"`
			}
			if json.Unmarshal(ev.Params, &e) != nil || e.Frame.ID != nav.FrameID {
				continue
			}
			if e.Frame.LoaderID == nav.LoaderID {
				ours = true
			}
			if ours {
				current = e.Frame.LoaderID
			}
		case "Page.lifecycleEvent":
			var e struct {
				FrameID  string `json:"frameId"`
				LoaderID string `json:"loaderId"`
				Name     string `json:"name"`
			}
			if json.Unmarshal(ev.Params, &e) == nil && e.Name == "load" && e.FrameID == nav.FrameID && e.LoaderID == current {
				return nil
			}
		}
	}
}

// EvalError is an exception thrown by an expression Evaluate ran.
type EvalError struct {
	// Text is the exception's description.
	Text string
}

// Error gives the exception's description.
func (e *EvalError) Error() string { return "the page's script failed: " + e.Text }

// Evaluate runs the JavaScript expression in the page and decodes its value, as JSON, into
// result (nil: ignored).
func (p *Page) Evaluate(ctx context.Context, expression string, result any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := p.Call(ctx, "Runtime.evaluate", map[string]any{"expression": expression, "returnByValue": true}, &r); err != nil {
		return err
	}
	if d := r.ExceptionDetails; d != nil {
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text = d.Exception.Description
		}
		return &EvalError{Text: text}
	}
	if result == nil {
		return nil
	}
	if len(r.Result.Value) == 0 {
		return &EvalError{Text: "the expression has no value that JSON can carry"}
	}
	if err := json.Unmarshal(r.Result.Value, result); err != nil {
		return fmt.Errorf("devtools: decode the value of %q: %w", expression, err)
	}
	return nil
}

// Screenshot returns a PNG of the page as laid out (beyond the window when it is longer).
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	var r struct {
		Data []byte `json:"data"` // base64 in the message
	}
	if err := p.Call(ctx, "Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true, "fromSurface": true,
	}, &r); err != nil {
		return nil, err
	}
	return r.Data, nil
}
