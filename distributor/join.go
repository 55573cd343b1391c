package distributor

import (
	"net"
	"slices"
)

// JoinAddrs returns the addresses, HOST:PORT, a worker can join this main
// node at, the best first: ClusterConfig.Listen's host when it names one;
// for an unspecified host each address of the machine (joinAddrs). It
// never fails: with no address to list it returns Addr alone. Safe for
// concurrent use.
func (c *Cluster) JoinAddrs() []string {
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		c.log.Debug("cannot list the machine's addresses", "err", err)
	}
	return joinAddrs(c.listen, c.Addr(), ifaces)
}

// joinAddrs returns the addresses, HOST:PORT, that a worker can give to
// join a main node whose gossip listens on listen (ClusterConfig.Listen), whose gossip
// is advertised at bound (memberlist's pick, with the port it bound):
// listen's host when it names one; for 0.0.0.0 each IPv4 address of the
// machine's ifaces, for :: or no host each IPv4 then IPv6 one, loopback
// last and link-local never (it needs a zone); bound alone when none is
// left. The port is bound's.
func joinAddrs(listen, bound string, ifaces []net.Addr) []string {
	host, _, err := net.SplitHostPort(listen)
	_, port, err2 := net.SplitHostPort(bound)
	if err != nil || err2 != nil {
		return []string{bound}
	}
	ip := net.ParseIP(host)
	if host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{net.JoinHostPort(host, port)}
	}
	var v4, v6, loop []string
	for _, a := range ifaces {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLinkLocalUnicast() || n.IP.IsUnspecified() || n.IP.IsMulticast() {
			continue
		}
		four := n.IP.To4() != nil
		if !four && ip != nil && ip.To4() != nil { // 0.0.0.0: IPv4 only
			continue
		}
		a := net.JoinHostPort(n.IP.String(), port)
		switch {
		case n.IP.IsLoopback():
			loop = append(loop, a)
		case four:
			v4 = append(v4, a)
		default:
			v6 = append(v6, a)
		}
	}
	if all := slices.Concat(v4, v6, loop); len(all) > 0 {
		return all
	}
	return []string{bound}
}
