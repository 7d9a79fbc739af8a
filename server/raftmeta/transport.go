package raftmeta

import (
	"github.com/hashicorp/raft"
)

// newTransport returns the transport of the node: Config.Transport when
// set, else hashicorp's network transport over Config.Listener and
// Config.Dial.
func newTransport(cfg Config, hlog *hclogAdapter) raft.Transport {
	if cfg.Transport != nil {
		return cfg.Transport
	}
	dial := cfg.Dial
	if dial == nil {
		dial = tcpDial
	}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  &streamLayer{Listener: cfg.Listener, advertise: advertiseAddr(cfg.Advertise), dial: dial},
		MaxPool: transportMaxPool,
		Timeout: cfg.TransportTimeout,
		Logger:  hlog.Named("transport"),
	})
}

// closeTransport closes t if it can be closed (raft.WithClose), and the
// connections a network transport keeps open to its peers, so that theirs
// end as a stopped process's do; a nil t is nothing to close.
// Hashicorp's transports may be closed twice.
func closeTransport(t raft.Transport) {
	if c, ok := t.(raft.WithClose); ok {
		c.Close()
	}
	if s, ok := t.(interface{ CloseStreams() }); ok {
		s.CloseStreams()
	}
}
