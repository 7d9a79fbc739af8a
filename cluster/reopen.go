package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ReopenResult says what ReopenBroker did.
type ReopenResult struct {
	BrokerID int
	// Reopened are the broker's replicas whose failed logs were closed and
	// opened again from disk, sorted by topic and partition.
	Reopened []ReplicaRef
	// Journal is true when the cluster journal had failed and was
	// reopened along with them.
	Journal bool
}

// ReplicaRef names one replica of a partition on a broker.
type ReplicaRef struct {
	Topic     string
	Partition int
}

// ReopenBroker reopens every replica log of broker id that refuses writes
// since a write, fsync or truncate failed
// (docs/design.md § Sticky failure) — typically because the disk was full — without stopping the
// broker, and the cluster journal if it failed too. Each log is closed and
// opened again, which scans its file from disk as a start does: the
// records found there are what the replica holds from then on. Nothing is
// retried: the write that failed was never acknowledged, and a reopened
// follower that lacks it lags until a catch-up (the controller's, or
// CatchUp). Damage the scan finds (a torn tail included) is reported as a
// *log.CorruptionError and never repaired; that replica stays closed and
// reports it at every use, as after a broker start.
//
// It waits for each partition's writes in flight and holds new ones back
// while that partition's log is reopened; the broker's other partitions
// keep serving. Stopping and starting the broker reopens every log too, but
// takes all of the broker's replicas out of service meanwhile. The broker
// must be available (a stopped one is started instead). Logs that have not
// failed are left alone; with nothing failed, ReopenBroker changes
// nothing.
func (c *Cluster) ReopenBroker(id int) (ReopenResult, error) {
	res := ReopenResult{BrokerID: id}
	if id < 1 {
		return res, fmt.Errorf("cluster: reopen broker %d: %w", id, ErrInvalidBrokerID)
	}
	if !c.knownBroker(id) {
		return res, fmt.Errorf("cluster: reopen broker %d: %w", id, ErrUnknownBroker)
	}
	if !c.hosts(id) {
		return operateOn[ReopenResult](c, id, OperateRequest{Op: OperateReopen, Broker: id}, byOperator)
	}
	return c.reopenHosted(id)
}

// reopenHosted is ReopenBroker on a broker this process hosts.
func (c *Cluster) reopenHosted(id int) (ReopenResult, error) {
	res := ReopenResult{BrokerID: id}
	b := c.broker(id)
	if b == nil || !b.Available() {
		return res, fmt.Errorf("cluster: reopen broker %d: start it instead (a start opens every log): %w", id, ErrBrokerUnavailable)
	}
	keys := b.failedReplicas()
	slices.SortFunc(keys, func(x, y replicaKey) int {
		return cmp.Or(cmp.Compare(x.topic, y.topic), cmp.Compare(x.partition, y.partition))
	})
	var errs []error
	for _, k := range keys {
		ok, err := c.reopenReplica(b, k)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			res.Reopened = append(res.Reopened, ReplicaRef{Topic: k.topic, Partition: k.partition})
		}
	}
	if c.files != nil {
		reopened, err := c.files.journal.reopenFailed()
		res.Journal = reopened
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("cluster: reopen broker %d: %w", id, err)
	}
	return res, nil
}

// reopenReplica reopens one failed replica log of b while the partition's
// writer slot is idle, so that no append is in flight on the log it closes.
func (c *Cluster) reopenReplica(b *Broker, k replicaKey) (bool, error) {
	p, err := c.partition(k.topic, k.partition)
	if err != nil {
		// The topic went away (deleted) since the list was taken.
		return b.reopenReplica(k)
	}
	p.lockIdle()
	defer c.unlockIdle(p)
	ok, err := b.reopenReplica(k)
	c.refreshHW(p)
	return ok, err
}

// reopenFailed closes the journal's log if it has failed; the next entry
// or read opens it again from disk. It reports whether it did. A torn or
// damaged journal is reported by that open, never repaired.
func (j *journal) reopenFailed() (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.l == nil || j.l.Failed() == nil {
		return false, nil
	}
	_ = j.l.Close() // as for a replica: the scan below is what counts
	j.l = nil
	if _, err := j.logLocked(false); err != nil {
		return false, err
	}
	return true, nil
}
