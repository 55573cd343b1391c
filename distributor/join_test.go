package distributor

import (
	"net"
	"strings"
	"testing"
)

// TestJoinAddrs (issue 27, item 9): on a machine with an IPv6 ULA
// address, --listen 0.0.0.0:7946 names its IPv4 addresses, loopback last,
// not the IPv6 address memberlist advertises; :: names IPv6 ones too,
// never link-local; a named host is kept, with the port bound.
func TestJoinAddrs(t *testing.T) {
	var ifaces []net.Addr
	for _, c := range []string{"127.0.0.1/8", "::1/128", "192.0.2.2/24", "fd00::2/64", "fe80::fc:ff:fe00:1/64", "10.1.2.3/16"} {
		ip, n, err := net.ParseCIDR(c)
		if err != nil {
			t.Fatal(err)
		}
		ifaces = append(ifaces, &net.IPNet{IP: ip, Mask: n.Mask})
	}
	for _, c := range []struct {
		listen, bound string
		ifaces        []net.Addr
		want          string
	}{
		{"0.0.0.0:7946", "[fd00::2]:7946", ifaces, "192.0.2.2:7946 10.1.2.3:7946 127.0.0.1:7946"},
		{"0.0.0.0:0", "[fd00::2]:41234", ifaces, "192.0.2.2:41234 10.1.2.3:41234 127.0.0.1:41234"},
		{"[::]:7946", "[fd00::2]:7946", ifaces, "192.0.2.2:7946 10.1.2.3:7946 [fd00::2]:7946 127.0.0.1:7946 [::1]:7946"},
		{":7946", "192.0.2.2:7946", ifaces, "192.0.2.2:7946 10.1.2.3:7946 [fd00::2]:7946 127.0.0.1:7946 [::1]:7946"},
		{"127.0.0.1:0", "127.0.0.1:5555", ifaces, "127.0.0.1:5555"},
		{"main.example:7946", "192.0.2.2:7946", ifaces, "main.example:7946"},
		{"0.0.0.0:7946", "[fd00::2]:7946", nil, "[fd00::2]:7946"},
	} {
		if got := strings.Join(joinAddrs(c.listen, c.bound, c.ifaces), " "); got != c.want {
			t.Errorf("--listen %s bound at %s: %q, want %q", c.listen, c.bound, got, c.want)
		}
	}
}
