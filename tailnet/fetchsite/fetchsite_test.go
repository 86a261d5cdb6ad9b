package fetchsite_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"buddi/tailnet/fetchsite"
)

// Over TLS the own origin is https: an http Origin on the same host and port is another one.
// Served on a real loopback listener with TLS.
func TestOwnOriginTakesTheScheme(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fetchsite.Check(r); err != nil {
			fetchsite.Refuse(w, err)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	for origin, want := range map[string]int{
		"https://" + host:                  http.StatusOK,
		"HTTPS://" + strings.ToUpper(host): http.StatusOK,
		"http://" + host:                   http.StatusForbidden,
		"https://" + host + "/path":        http.StatusForbidden,
		"https://user@" + host:             http.StatusForbidden,
		"":                                 http.StatusForbidden,
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("a write with Origin %q: %d %q, want %d", origin, resp.StatusCode, body, want)
		}
		if want == http.StatusForbidden && !strings.Contains(string(body), "refused") {
			t.Errorf("a refusal without its sentence: %q", body)
		}
	}
}
