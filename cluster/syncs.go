package cluster

import (
	"fmt"

	"github.com/pystream/pystream/log/durable"
)

// openSyncs opens the process's sync group over its brokers' file system
// at the root and has the brokers it opens from now on use it, unless
// Options.Broker.Sync says how they sync: the appends in flight on all of
// its replicas then share one sync of the file system
// (docs/design.md § One sync for many partitions).
func (c *Cluster) openSyncs() error {
	if c.opts.Broker.Sync != nil || c.opts.Broker.Journal {
		return nil
	}
	g, err := durable.NewSyncGroup(c.opts.Broker.FS, c.root)
	if err != nil {
		return fmt.Errorf("cluster: open %s: %w", c.root, err)
	}
	g.Logf = c.opts.Broker.Logf
	c.syncs = g
	c.opts.Broker.Sync = g.Sync
	return nil
}

// SyncsShared reports whether this process's replica logs share one sync
// of the file system (BrokerOptions.Sync), rather than each fsyncing its
// own file.
func (c *Cluster) SyncsShared() bool { return c.syncs != nil && c.syncs.Whole() }

// closeSyncs releases the sync group, once the brokers are closed.
func (c *Cluster) closeSyncs() error {
	if c.syncs == nil {
		return nil
	}
	return c.syncs.Close()
}
