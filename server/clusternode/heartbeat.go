package clusternode

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/replication"
)

// heartbeats is what the controller knows of the brokers: when each last
// reported, and what it reported of its replicas. It lives on the node
// that leads the metadata group and is started afresh at every leadership
// (reset): a new controller counts every broker's silence from its own
// start, never from a report it did not receive. It is safe for concurrent
// use.
type heartbeats struct {
	n *Node
	// mu guards the fields below.
	mu      sync.Mutex
	since   time.Time
	last    map[int]time.Time
	reports map[int]map[partKey]replication.ReplicaReport
}

func newHeartbeats(n *Node) *heartbeats {
	return &heartbeats{n: n, last: map[int]time.Time{}, reports: map[int]map[partKey]replication.ReplicaReport{}}
}

func (h *heartbeats) reset(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.since, h.last, h.reports = now, map[int]time.Time{}, map[int]map[partKey]replication.ReplicaReport{}
}

func (h *heartbeats) record(hb replication.Heartbeat, now time.Time) {
	reps := map[partKey]replication.ReplicaReport{}
	for _, r := range hb.Replicas {
		reps[partKey{r.Topic, r.Partition}] = r
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last[hb.Node], h.reports[hb.Node] = now, reps
}

// seen returns when broker id last reported (the controller's start when
// it has not yet), and whether that is recent enough to count it up.
func (h *heartbeats) seen(id int, now time.Time) (last time.Time, up bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	last, ok := h.last[id]
	if !ok {
		last = h.since
	}
	return last, ok && now.Sub(last) <= 3*HeartbeatInterval(h.n.cfg.FailoverAfter)
}

// report returns broker id's last report of a partition.
func (h *heartbeats) report(id int, k partKey) (replication.ReplicaReport, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.reports[id][k]
	return r, ok
}

// Heartbeat takes a broker's report (replication.Peer); only the node
// leading the metadata group takes them.
func (n *Node) Heartbeat(_ context.Context, hb replication.Heartbeat) error {
	if !n.raft.IsLeader() {
		id, _ := n.raft.Leader()
		return &replication.Error{Code: replication.CodeNotLeader, Leader: id, Message: "heartbeats go to the metadata group's leader"}
	}
	if _, ok := n.fsm.node(hb.Node); !ok {
		return replication.Errorf(replication.CodeRefused, "broker %d is not registered", hb.Node)
	}
	n.hbs.record(hb, n.now())
	return nil
}

// heartbeatLoop reports to the metadata group's leader every
// HeartbeatInterval, until the node closes.
func (n *Node) heartbeatLoop() {
	every := HeartbeatInterval(n.cfg.FailoverAfter)
	for n.sleep(every) {
		hb := replication.Heartbeat{Node: n.cfg.ID, Replicas: n.reports()}
		if n.raft.IsLeader() {
			n.hbs.record(hb, n.now())
			continue
		}
		id, addr := n.raft.Leader()
		if id == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(n.ctx, every*3)
		if err := n.rpc.Heartbeat(ctx, addr, hb); err != nil {
			n.log.Debug("heartbeat not delivered", "leader", id, "err", err)
		}
		cancel()
	}
}

// assigned lists the partitions this node holds a replica of, with their
// metadata.
func (n *Node) assigned() map[partKey]cluster.PartitionMetadata {
	out := map[partKey]cluster.PartitionMetadata{}
	n.fsm.read(func(s *cluster.MetaState) {
		for name, t := range s.Meta.Topics {
			for _, pm := range t.Partitions {
				if slices.Contains(pm.Replicas, n.cfg.ID) {
					out[partKey{name, pm.Partition}] = pm
				}
			}
		}
	})
	return out
}

// reports describes every replica this node holds.
func (n *Node) reports() []replication.ReplicaReport {
	var out []replication.ReplicaReport
	for k := range n.assigned() {
		rep := replication.ReplicaReport{Topic: k.topic, Partition: k.partition}
		if l, err := n.broker.Replica(k.topic, k.partition, true); err != nil {
			rep.Error = err.Error()
		} else {
			end := l.NextOffset()
			rep.LogEnd = &end
		}
		r := n.replica(k.topic, k.partition)
		if r.fmu.TryLock() {
			rep.SyncedEpoch, rep.CaughtUp, rep.Diverged = r.syncedEpoch, r.synced && r.caughtUp, r.diverged
			r.fmu.Unlock()
		}
		out = append(out, rep)
	}
	return out
}

// replicaLoop keeps this node's replicas in step: it creates the logs of
// new partitions, brings every replica outside its active set back to its
// leader's log (cut back, then caught up) so that the controller can let
// it rejoin, and as a leader catches followers up and raises the high
// watermark when no write does.
func (n *Node) replicaLoop() {
	var mu sync.Mutex
	busy := map[partKey]bool{}
	for {
		ch, _ := n.fsm.watch()
		for k, pm := range n.assigned() {
			mu.Lock()
			if busy[k] || n.ctx.Err() != nil {
				mu.Unlock()
				continue
			}
			busy[k] = true
			mu.Unlock()
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				if err := n.tend(k, pm); err != nil {
					n.log.Debug("replica not yet in step", "partition", fmt.Sprintf("%s/%d", k.topic, k.partition), "err", err)
				}
				mu.Lock()
				delete(busy, k)
				mu.Unlock()
			}()
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-n.ctx.Done():
			t.Stop()
			return
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// tend does one step of replicaLoop for one replica.
func (n *Node) tend(k partKey, pm cluster.PartitionMetadata) error {
	l, err := n.broker.Replica(k.topic, k.partition, true)
	if err != nil {
		return err
	}
	// A changed segment.bytes or segment.ms reaches open logs here.
	if cfg, err := n.TopicConfig(k.topic); err == nil {
		if err := l.SetSegmentOptions(cluster.SegmentSettings(cfg)); err != nil {
			return err
		}
	}
	r := n.replica(k.topic, k.partition)
	ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
	defer cancel()
	if pm.Leader == n.cfg.ID {
		if r.highWatermark() < l.NextOffset() {
			r.mu.Lock()
			busy := r.writing
			r.mu.Unlock()
			if !busy {
				_, err := n.catchUp(ctx, k.topic, k.partition, 0)
				return err
			}
		}
		return nil
	}
	if slices.Contains(pm.Active, n.cfg.ID) {
		return nil // the leader pushes to active followers
	}
	if !r.fmu.TryLock() {
		return nil // the leader is writing to it
	}
	defer r.fmu.Unlock()
	if !r.synced || r.syncedEpoch != pm.LeaderEpoch {
		if err := n.syncLocked(ctx, r, pm, l); err != nil {
			return err
		}
	}
	return n.pullLocked(ctx, r, pm, l)
}
