package spawn

import (
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	tail := " S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100"
	tests := []struct {
		name string
		line string
		want procStat
		err  bool
	}{
		{"plain", "1234 (node)" + tail, procStat{state: 'S', pgrp: 1234, start: 98765}, false},
		{"name with spaces and parentheses", "1234 (a) b (c) d)" + tail, procStat{state: 'S', pgrp: 1234, start: 98765}, false},
		{"zombie", "1234 (x) Z 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", procStat{state: 'Z', pgrp: 77, start: 5}, false},
		{"no parenthesis", "1234 node S 1", procStat{}, true},
		{"short", "1234 (x) S 1 2 3", procStat{}, true},
		{"bad start", "1234 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 abc 0 0", procStat{}, true},
		{"empty", "", procStat{}, true},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.line))
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("%s: got %+v, %v; want %+v, error %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func TestClockTicksAndBootTime(t *testing.T) {
	t.Parallel()
	if hz := clockTicks(); hz == 0 || hz > 10000 {
		t.Errorf("clock ticks %d", hz)
	}
	if bt, err := bootTime(); err != nil || bt <= 0 {
		t.Errorf("boot time %d, %v", bt, err)
	}
}
