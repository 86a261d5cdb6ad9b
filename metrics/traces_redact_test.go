package metrics

import (
	"strings"
	"testing"
)

// A collector's password in its endpoint never reaches the log.
func TestTraceEndpointIsLoggedWithoutItsPassword(t *testing.T) {
	got := redactedURL("https://owner:s3cret-pass@collector.example:4318/v1/traces")
	if strings.Contains(got, "s3cret-pass") || !strings.Contains(got, "collector.example:4318") {
		t.Errorf("logged as %q", got)
	}
}
