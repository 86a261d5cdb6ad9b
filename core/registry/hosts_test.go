package registry

import (
	"slices"
	"testing"
)

func TestNetworkHosts(t *testing.T) {
	got := NetworkHosts([]string{"api.github.com: repository names and issue text", " uploads.github.com : files", "api.github.com: again", "example.org", ""})
	if want := []string{"api.github.com", "uploads.github.com", "example.org"}; !slices.Equal(got, want) {
		t.Errorf("NetworkHosts: %q, want %q", got, want)
	}
}
