package bytesize

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {1023, "1023 bytes"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}, {2 << 40, "2.0 TiB"}, {4096 << 40, "4096.0 TiB"},
	} {
		if got := String(c.n); got != c.want {
			t.Errorf("String(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := String(uint64(64 << 20)); got != "64.0 MiB" {
		t.Errorf("String(uint64 64 MiB) = %q", got)
	}
}
