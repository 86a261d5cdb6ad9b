// Package bytesize says a number of bytes for a person: "812 bytes", "4.2 MiB", "1.5 GiB"
// (powers of 1024).
package bytesize

import "fmt"

// String says n in the largest binary unit in which it is at least one.
func String[N ~int64 | ~uint64](n N) string {
	units := [...]string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
