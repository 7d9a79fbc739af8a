package clusternode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/replication"
)

// This file is the leader's side of a write: phase 4's contract across
// processes. The leader appends durably, sends the records to every active
// follower with its leader epoch, and acknowledges only when each has
// fsync-ed them. Concurrent writes to one partition are group-committed:
// whoever finds the partition idle writes everything waiting as one batch.
// A leader stops waiting for a follower only once the removal of that
// follower from the active set is committed through Raft and applied here
// — never on its own.

// pushTimeout bounds one send to one follower; a follower that does not
// answer in time fails the write (the records stay on the leader, and the
// controller fences a silent broker after the failover delay).
const pushTimeout = 10 * time.Second

// maxPushBytes bounds the records of one catch-up request.
const maxPushBytes = 1 << 20

// produceLocal writes payloads to a partition this node leads.
func (n *Node) produceLocal(ctx context.Context, topicName string, partition int, payloads [][]byte) (*sendRequest, error) {
	pm, err := n.partitionMeta(topicName, partition)
	if err != nil {
		return nil, err
	}
	if pm.Leader != n.cfg.ID {
		return nil, &replication.Error{Code: replication.CodeNotLeader, Leader: pm.Leader,
			Message: fmt.Sprintf("%s/%d is led by broker %d", topicName, partition, pm.Leader)}
	}
	r := n.replica(topicName, partition)
	req := &sendRequest{payloads: payloads, done: make(chan struct{})}
	r.mu.Lock()
	r.queue = append(r.queue, req)
	idle := !r.writing
	r.writing = true
	r.mu.Unlock()
	if idle {
		n.drain(r)
	}
	select {
	case <-req.done:
		return req, req.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// drain writes the partition's queue, batch after batch, until it is
// empty. Only the caller that found the partition idle runs it.
func (n *Node) drain(r *replica) {
	for {
		r.mu.Lock()
		batch := r.queue
		r.queue = nil
		if len(batch) == 0 {
			r.writing = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		n.writeBatch(r, batch)
	}
}

func finish(batch []*sendRequest, err error) {
	for _, req := range batch {
		req.err = err
		close(req.done)
	}
}

// writeBatch appends a batch on the leader and replicates it.
func (n *Node) writeBatch(r *replica, batch []*sendRequest) {
	// The leadership is checked and the batch appended under fmu, which a
	// follower's sync and pull hold: a leader replaced meanwhile either
	// sees the new epoch here and appends nothing, or appends before the
	// sync at the new epoch, which then finds the records and cuts them.
	// Checked outside it, a write at the old epoch could land after that
	// sync and stay below what the pull appends: a record no one
	// acknowledged in the middle of a replica the controller re-admits.
	r.fmu.Lock()
	pm, recs, err := n.appendLocked(r, batch)
	r.fmu.Unlock()
	if err != nil {
		finish(batch, err)
		return
	}
	failed, errs := n.replicate(r, pm, recs)
	if len(failed) > 0 {
		finish(batch, &cluster.ReplicationError{Topic: r.topic, Partition: r.partition, Offset: recs[0].Offset,
			Count: len(recs), BrokerIDs: failed, Err: errors.Join(errs...)})
		return
	}
	end := recs[len(recs)-1].Offset + 1
	n.raiseHW(r, end)
	at := 0
	for _, req := range batch {
		req.recs = recs[at : at+len(req.payloads)]
		req.brokers = slices.Clone(pm.Active)
		at += len(req.payloads)
	}
	finish(batch, nil)
}

// appendLocked appends a batch to the log of a partition this node leads,
// and returns the leadership it was appended under. r.fmu must be held.
func (n *Node) appendLocked(r *replica, batch []*sendRequest) (cluster.PartitionMetadata, []log.Record, error) {
	pm, err := n.fsm.partition(r.topic, r.partition)
	if err == nil && pm.Leader != n.cfg.ID {
		err = &cluster.LeaderUnavailableError{Topic: r.topic, Partition: r.partition, BrokerID: pm.Leader,
			Err: fmt.Errorf("broker %d leads it now (epoch %d)", pm.Leader, pm.LeaderEpoch)}
	}
	if err != nil {
		return pm, nil, err
	}
	l, err := n.broker.Replica(r.topic, r.partition, true)
	if err != nil {
		return pm, nil, &cluster.LeaderUnavailableError{Topic: r.topic, Partition: r.partition, BrokerID: n.cfg.ID, Err: err}
	}
	var payloads [][]byte
	for _, req := range batch {
		payloads = append(payloads, req.payloads...)
	}
	recs, err := l.AppendBatch(payloads)
	if err != nil {
		return pm, nil, &cluster.LeaderUnavailableError{Topic: r.topic, Partition: r.partition, BrokerID: n.cfg.ID, Err: err}
	}
	return pm, recs, nil
}

// replicate sends recs to every active follower of pm in parallel and
// returns the ones that failed. A follower whose removal from the active
// set is applied here while the send is out no longer counts.
func (n *Node) replicate(r *replica, pm cluster.PartitionMetadata, recs []log.Record) (failed []int, errs []error) {
	followers := slices.DeleteFunc(slices.Clone(pm.Active), func(id int) bool { return id == n.cfg.ID })
	if len(followers) == 0 {
		return nil, nil
	}
	type outcome struct {
		id  int
		err error
	}
	out := make(chan outcome, len(followers))
	ctx, cancel := context.WithTimeout(n.ctx, pushTimeout)
	defer cancel()
	for _, id := range followers {
		go func() { out <- outcome{id, n.push(ctx, r, pm, id, recs)} }()
	}
	pending := map[int]bool{}
	for _, id := range followers {
		pending[id] = true
	}
	for len(pending) > 0 {
		ch, _ := n.fsm.watch()
		select {
		case o := <-out:
			if !pending[o.id] {
				continue
			}
			delete(pending, o.id)
			if o.err != nil && n.stillActive(r, pm, o.id) {
				failed = append(failed, o.id)
				errs = append(errs, fmt.Errorf("broker %d: %w", o.id, o.err))
			}
		case <-ch:
			for id := range pending {
				if !n.stillActive(r, pm, id) {
					delete(pending, id) // its removal is committed: stop waiting
				}
			}
		}
	}
	slices.Sort(failed)
	return failed, errs
}

// stillActive reports whether follower id must still hold the leader's
// writes: the partition is still led by this node at pm's epoch, and id is
// in its active set.
func (n *Node) stillActive(r *replica, pm cluster.PartitionMetadata, id int) bool {
	now, err := n.fsm.partition(r.topic, r.partition)
	if err != nil || now.LeaderEpoch != pm.LeaderEpoch {
		return true // a write at an old epoch is never acknowledged for it
	}
	return slices.Contains(now.Active, id)
}

// push brings follower id up to the end of recs: it sends recs and, when
// the follower's log ends before them, first what it misses from this
// node's log, in requests of at most maxPushBytes. With no recs it brings
// the follower to the log end as it is (a catch-up).
func (n *Node) push(ctx context.Context, r *replica, pm cluster.PartitionMetadata, id int, recs []log.Record) error {
	addr, err := n.addrOf(id)
	if err != nil {
		return err
	}
	l, err := n.broker.Replica(r.topic, r.partition, false)
	if err != nil {
		return err
	}
	req := replication.ReplicateRequest{Topic: r.topic, Partition: r.partition, Epoch: pm.LeaderEpoch, Leader: n.cfg.ID,
		HighWatermark: r.highWatermark(), LogStart: l.LogStart(), Records: recs}
	target := l.NextOffset()
	if len(recs) > 0 {
		target = recs[len(recs)-1].Offset + 1
	}
	for attempt := 0; ; attempt++ {
		res, err := n.rpc.Replicate(ctx, addr, req)
		var re *replication.Error
		switch {
		case err == nil:
			r.mu.Lock()
			r.followerEnd[id] = res.End
			r.mu.Unlock()
			if res.End >= target {
				return nil
			}
			// A probe or a short send: go on from where it ends.
			req.Records, err = readFrom(l, res.End, target)
			if err != nil {
				return err
			}
		case errors.As(err, &re) && re.Code == replication.CodeBehind:
			from := re.End
			upto := target
			if len(recs) > 0 {
				upto = recs[0].Offset
			}
			if from >= upto {
				req.Records = recs
			} else if req.Records, err = readFrom(l, from, upto); err != nil {
				return err
			}
		case errors.As(err, &re) && re.Code == replication.CodeEpochAhead && attempt < 50:
			time.Sleep(20 * time.Millisecond) // its metadata is behind ours
		default:
			return err
		}
		req.HighWatermark, req.LogStart = r.highWatermark(), l.LogStart()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// readFrom reads this node's records [from, upto), at most maxPushBytes
// of them (at least one).
func readFrom(l *segment.Log, from, upto uint64) ([]log.Record, error) {
	var out []log.Record
	size := 0
	for at := from; at < upto && (size < maxPushBytes || len(out) == 0); {
		recs, err := l.Read(at, int(min(upto-at, 256)))
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("clusternode: %s ends at %d, before %d", l.Dir(), at, upto)
		}
		for _, rec := range recs {
			out = append(out, rec)
			size += log.FrameSize(len(rec.Payload))
		}
		at += uint64(len(recs))
	}
	return out, nil
}

// addrOf is a broker's internal address, from the metadata.
func (n *Node) addrOf(id int) (string, error) {
	info, ok := n.fsm.node(id)
	if !ok {
		return "", fmt.Errorf("clusternode: broker %d has no registered address: %w", id, cluster.ErrUnknownBroker)
	}
	return info.Addr, nil
}

// catchUp brings every active follower of a partition this node leads to
// its log end, then raises the high watermark to what all of them hold.
func (n *Node) catchUp(ctx context.Context, topicName string, partition int, only int) (replication.CatchUpResponse, error) {
	pm, err := n.fsm.partition(topicName, partition)
	if err != nil {
		return replication.CatchUpResponse{}, err
	}
	if pm.Leader != n.cfg.ID {
		return replication.CatchUpResponse{}, &replication.Error{Code: replication.CodeNotLeader, Leader: pm.Leader,
			Message: fmt.Sprintf("%s/%d is led by broker %d", topicName, partition, pm.Leader)}
	}
	r := n.replica(topicName, partition)
	l, err := n.broker.Replica(topicName, partition, true)
	if err != nil {
		return replication.CatchUpResponse{}, err
	}
	end := l.NextOffset()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	ok := true
	for _, id := range pm.Active {
		if id == n.cfg.ID || (only != 0 && id != only) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.push(ctx, r, pm, id, nil); err != nil {
				mu.Lock()
				errs, ok = append(errs, fmt.Errorf("broker %d: %w", id, err)), false
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ok && only == 0 {
		n.raiseHW(r, end)
	} else if ok {
		n.raiseHWFromFollowers(r, pm, end)
	}
	return replication.CatchUpResponse{End: end}, errors.Join(errs...)
}

// raiseHWFromFollowers raises the high watermark to the least log end
// among the leader (end) and its active followers' known ends.
func (n *Node) raiseHWFromFollowers(r *replica, pm cluster.PartitionMetadata, end uint64) {
	r.mu.Lock()
	hw := end
	for _, id := range pm.Active {
		if id == n.cfg.ID {
			continue
		}
		fe, ok := r.followerEnd[id]
		if !ok {
			r.mu.Unlock()
			return
		}
		hw = min(hw, fe)
	}
	r.mu.Unlock()
	n.raiseHW(r, hw)
}
