package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// spellings writes the IPv4 address a the ways a URL's host can carry it: dotted decimal,
// one number in decimal, octal and hex, dotted octal and hex (mixed case, zero-padded),
// the short forms a.b.c and a.b, a trailing dot, percent-encoded and Unicode dots,
// full-width digits, and inside IPv6 (mapped, compatible, NAT64, 6to4, Teredo).
func spellings(a netip.Addr) []string {
	b := a.As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	dotted := a.String()
	full := strings.NewReplacer("0", "０", "1", "１", "2", "２", "3", "３", "4", "４", "5", "５", "6", "６", "7", "７", "8", "８", "9", "９").Replace(dotted)
	hi, lo := uint16(n>>16), uint16(n)
	return []string{
		dotted,
		dotted + ".",
		fmt.Sprint(n),
		fmt.Sprintf("0%o", n),
		fmt.Sprintf("0x%x", n),
		fmt.Sprintf("0X%X", n),
		fmt.Sprintf("0x%08x", n),
		fmt.Sprintf("0%o.0%o.0%o.0%o", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("00%o.%d.0x%x.%d", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("0x%02X.0x%02X.0x%02X.0x%02X", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("%d.%d.%d", b[0], b[1], uint32(b[2])<<8|uint32(b[3])),
		fmt.Sprintf("%d.%d", b[0], n&0xffffff),
		fmt.Sprintf("0x%x.0x%x", b[0], n&0xffffff),
		strings.ReplaceAll(dotted, ".", "%2e"),
		strings.ReplaceAll(dotted, ".", "%2E"),
		strings.ReplaceAll(dotted, ".", "。"),
		strings.ReplaceAll(dotted, ".", "．"),
		strings.ReplaceAll(dotted, ".", "｡"),
		full,
		"[::ffff:" + dotted + "]",
		fmt.Sprintf("[::ffff:%x:%x]", hi, lo),
		fmt.Sprintf("[0:0:0:0:0:ffff:%s]", dotted),
		"[::" + dotted + "]",
		"[64:ff9b::" + dotted + "]",
		fmt.Sprintf("[64:ff9b::%x:%x]", hi, lo),
		fmt.Sprintf("[2002:%x:%x::1]", hi, lo),
		fmt.Sprintf("[2001:0:4136:e378:8000:63bf:%x:%x]", ^hi, ^lo),
	}
}

// More than 200 spellings of loopback, private, link-local, CGNAT and metadata addresses are
// each refused by the guard, bare, with port 80 or 443 written out, under https, and behind
// a userinfo-looking prefix; none is ever taken for a public host.
func TestEverySpellingOfAPlaceAgentsMayNotReachIsRefused(t *testing.T) {
	var g Guard
	targets := []string{"127.0.0.1", "127.0.0.53", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.100.100.200", "0.0.0.0", "100.64.0.1"}
	total := 0
	for _, target := range targets {
		for i, host := range spellings(netip.MustParseAddr(target)) {
			forms := []string{"http://" + host + "/"}
			switch i % 4 {
			case 1:
				forms = append(forms, "http://"+host+":80/latest/meta-data/")
			case 2:
				forms = append(forms, "https://"+host+":443/")
			case 3:
				forms = append(forms, "http://example.com%40"+host+"/", "https://"+host+"/#@example.com")
			}
			for _, raw := range forms {
				total++
				u, err := g.CheckURL(raw)
				if err == nil {
					t.Errorf("%s: %q accepted as host %q", target, raw, u.Host)
					continue
				}
				if !errors.Is(err, ErrBlocked) {
					t.Errorf("%s: %q: %v is not the guard's refusal", target, raw, err)
				}
			}
		}
	}
	if total < 200 {
		t.Fatalf("only %d spellings were tried", total)
	}
	t.Logf("%d spellings refused", total)
}
