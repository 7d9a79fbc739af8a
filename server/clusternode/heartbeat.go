package clusternode

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/raftmeta"
	"github.com/pystream/pystream/server/replication"
)

// This file is what a node knows of the other brokers: their heartbeats.
// Every node reports its replicas (cluster.Cluster.Reports) to the node
// that leads the metadata group, every HeartbeatInterval. That node — the
// controller's — counts a broker up while its reports arrive and keeps the
// last one; it answers every heartbeat with all it knows
// (replication.Observation), so that every node answers a broker's
// availability and a replica's log end as the controller knows them, with
// the time of each report: one truth, a heartbeat old at most.

// heartbeats is the node's cluster.Observer. It is safe for concurrent use.
type heartbeats struct {
	n *Node
	// mu guards the fields below.
	mu sync.Mutex
	// term is the Raft term the count below belongs to: the term in
	// which this node last led the metadata group.
	term uint64
	// since is when this node began to lead in term: a broker it has not
	// heard from yet has been silent since then.
	since time.Time
	// last and reports are the heartbeats this node received while it
	// leads the metadata group, in term.
	last map[int]time.Time
	// before is when this node last heard from a broker before it began
	// to lead in term: the controller it reported to, by that
	// controller's last answer. A new controller counts the old one's
	// silence from there, not from its own election.
	before  map[int]time.Time
	reports map[int]map[replicaKey]cluster.ReplicaReport
	// seen is the controller's last answer to this node's heartbeat, and
	// seenAt when it arrived.
	seen   replication.Observation
	seenAt time.Time
}

type replicaKey struct {
	topic     string
	partition int
}

var _ cluster.Observer = (*heartbeats)(nil)

func newHeartbeats(n *Node) *heartbeats {
	return &heartbeats{n: n, last: map[int]time.Time{}, reports: map[int]map[replicaKey]cluster.ReplicaReport{}}
}

// leadingLocked reports whether this node leads the metadata group. The
// first time it is asked in a term this node leads, it starts that term's
// count: every broker's silence counted from now, never from a report of
// an earlier term (a node that has just won an election has heard from no
// one yet, and no one is down for that) — except the controller this node
// reported to until then, whose silence counts from its last answer: an
// election follows the old controller's silence, and counting it again
// from the election would add the election's time to every failover of
// the partitions it led. h.mu must be held.
func (h *heartbeats) leadingLocked(now time.Time) bool {
	if !h.n.raft.IsLeader() {
		return false
	}
	if term := h.n.raft.Term(); term != h.term {
		h.term, h.since, h.last, h.reports = term, now, map[int]time.Time{}, map[int]map[replicaKey]cluster.ReplicaReport{}
		h.before = map[int]time.Time{}
		if old := h.seen.Controller; old != 0 && old != h.n.cfg.ID && !h.seenAt.IsZero() && h.seenAt.Before(now) {
			h.before[old] = h.seenAt
		}
	}
	return true
}

// record keeps broker hb.Node's report, received at now, while this node
// leads the metadata group.
func (h *heartbeats) record(hb replication.Heartbeat, now time.Time) {
	reps := make(map[replicaKey]cluster.ReplicaReport, len(hb.Replicas))
	for _, r := range hb.Replicas {
		// A report is dated by the controller's clock, when it arrived:
		// every node then tells how old the controller's knowledge is on
		// one clock, whatever the reporting broker's says.
		r.At = now
		reps[replicaKey{r.Topic, r.Partition}] = r
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leadingLocked(now) {
		h.last[hb.Node], h.reports[hb.Node] = now, reps
	}
}

// window is how long a broker may stay silent and still count as up.
func (h *heartbeats) window() time.Duration { return HeartbeatWindow(h.n.cfg.FailoverAfter) }

// seenLocked returns when broker id was last heard from, and whether that
// is recent enough to count it up. A broker not heard from since this
// node began to lead counts up for one window from then: its first
// heartbeat to the new leader is on its way. The old controller is the
// exception: it was heard from, by its answers to this node's heartbeats,
// and counts from its last one — live, it answered within the window;
// silent past it, it is no more up than any broker whose heartbeats
// stopped. h.mu must be held, after leadingLocked.
func (h *heartbeats) seenLocked(id int, now time.Time) (last time.Time, up bool) {
	if last, ok := h.last[id]; ok {
		return last, now.Sub(last) <= h.window()
	}
	if before, ok := h.before[id]; ok {
		return before, now.Sub(before) <= h.window()
	}
	return h.since, now.Sub(h.since) <= h.window()
}

// Controller is the node leading the metadata group.
func (h *heartbeats) Controller() int { return h.n.Controller() }

// Broker is what the controller knows of broker id: on the controller,
// from the heartbeats themselves; elsewhere, from the controller's last
// answer, as long as it is recent — a node that has not heard from the
// controller for a while knows nothing, and says so (not available).
func (h *heartbeats) Broker(id int) cluster.BrokerInfo {
	now := h.n.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leadingLocked(now) {
		last, up := h.seenLocked(id, now)
		b := cluster.BrokerInfo{ID: id, Available: up}
		if !up {
			b.DownSince = last
		}
		return b
	}
	fresh := now.Sub(h.seenAt) <= h.window()
	for _, b := range h.seen.Brokers {
		if b.ID == id {
			info := cluster.BrokerInfo{ID: id, Available: b.Available && fresh}
			if !info.Available {
				info.DownSince = b.LastSeen
			}
			return info
		}
	}
	return cluster.BrokerInfo{ID: id}
}

// Replica is broker id's last report of a partition's replica, as the
// controller has it.
func (h *heartbeats) Replica(id int, topicName string, partition int) (cluster.ReplicaReport, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leadingLocked(h.n.now()) {
		r, ok := h.reports[id][replicaKey{topicName, partition}]
		return r, ok
	}
	for _, b := range h.seen.Brokers {
		if b.ID != id {
			continue
		}
		for _, r := range b.Replicas {
			if r.Topic == topicName && r.Partition == partition {
				return r, true
			}
		}
	}
	return cluster.ReplicaReport{}, false
}

// known reports whether this node knows what the controller knows of the
// brokers: it leads the metadata group, or it has had an answer to one of
// its heartbeats. Until then it could only tell every other broker
// unknown, which is not what the controller knows.
func (h *heartbeats) known() bool {
	if h.n.raft.IsLeader() {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.seenAt.IsZero()
}

// observation is what the controller knows, as it answers a heartbeat.
func (h *heartbeats) observation(now time.Time) replication.Observation {
	var ids []int
	h.n.fsm.read(func(s *cluster.MetaState) { ids = append(ids, s.Meta.Brokers...) })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.leadingLocked(now)
	obs := replication.Observation{Controller: h.n.cfg.ID, At: now}
	for _, id := range ids {
		last, up := h.seenLocked(id, now)
		b := replication.BrokerSeen{ID: id, Available: up, LastSeen: last}
		for _, r := range h.reports[id] {
			b.Replicas = append(b.Replicas, r)
		}
		obs.Brokers = append(obs.Brokers, b)
	}
	return obs
}

// Heartbeat takes a broker's report (replication.Peer) and answers with
// what the controller knows; only the node leading the metadata group
// takes them.
func (p peer) Heartbeat(_ context.Context, hb replication.Heartbeat) (replication.Observation, error) {
	n := p.n
	if !n.raft.IsLeader() {
		id, _ := n.raft.Leader()
		return replication.Observation{}, replication.Errorf(replication.CodeNotLeader, "heartbeats go to the metadata group's leader, broker %d", id)
	}
	if _, ok := n.fsm.node(hb.Node); !ok {
		return replication.Observation{}, replication.Errorf(replication.CodeRefused, "broker %d is not registered", hb.Node)
	}
	now := n.now()
	n.hbs.record(hb, now)
	return n.hbs.observation(now), nil
}

// heartbeatLoop reports to the metadata group's leader every
// HeartbeatInterval, until the node closes, and keeps its answer.
func (n *Node) heartbeatLoop() {
	every := HeartbeatInterval(n.cfg.FailoverAfter)
	for n.sleep(every) {
		hb := replication.Heartbeat{Node: n.cfg.ID, Replicas: n.core.Reports(n.cfg.ID)}
		if n.raft.IsLeader() {
			n.hbs.record(hb, n.now())
			continue
		}
		id, _ := n.raft.Leader()
		if id == 0 {
			continue
		}
		addr, err := n.addrOf(id)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(n.ctx, every*3)
		obs, err := n.rpc.Heartbeat(ctx, addr, hb)
		cancel()
		if err != nil {
			n.log.Debug("heartbeat not delivered", "leader", id, "err", err)
			continue
		}
		n.hbs.mu.Lock()
		n.hbs.seen, n.hbs.seenAt = obs, n.now()
		n.hbs.mu.Unlock()
	}
}

// Propose is the internal API's proposal (replication.Peer): only the Raft
// leader applies; the others answer CodeNotLeader with where it is.
func (p peer) Propose(ctx context.Context, cmd []byte) ([]byte, error) {
	n := p.n
	if !n.raft.IsLeader() {
		id, _ := n.raft.Leader()
		return nil, replication.Errorf(replication.CodeNotLeader, "this node does not lead the metadata group, broker %d does", id)
	}
	if err := checkProposer(ctx, cmd); err != nil {
		return nil, err
	}
	out, err := n.raft.Apply(ctx, cmd)
	var refused *raftmeta.RefusedError
	if errors.As(err, &refused) {
		return nil, refused.Err
	}
	if errors.Is(err, raftmeta.ErrNotLeader) {
		return nil, replication.Errorf(replication.CodeNotLeader, "%v", err)
	}
	return out, err
}

// Membership applies a change of the metadata group's voters
// (replication.Peer).
func (p peer) Membership(ctx context.Context, req replication.MembershipRequest) error {
	return p.n.Membership(ctx, req)
}
