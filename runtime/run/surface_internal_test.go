package run

import (
	"strings"
	"testing"
)

// The facts each surface tells the run say whether a canvas is there: the dashboard has one
// beside the chat; Telegram and the terminal do not, and degrade a view to text.
func TestSurfaceFactsSayWhetherACanvasIsThere(t *testing.T) {
	if f := surfaceFacts("dashboard"); !strings.Contains(f, "A canvas beside the chat draws") || strings.Contains(f, "canvas do not") {
		t.Errorf("dashboard: %s", f)
	}
	for _, s := range []string{"telegram", "terminal"} {
		if f := surfaceFacts(s); !strings.Contains(f, "canvas") || !strings.Contains(f, "as text") || strings.Contains(f, "A canvas beside") {
			t.Errorf("%s: %s", s, f)
		}
	}
}
