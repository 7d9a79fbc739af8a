package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
)

// This file is the leader's write path — the one in PyStream, for a
// Cluster of brokers in one process and for a process of cluster mode
// alike: a write to a partition is queued on the process that hosts its
// leader (forwarded there when it arrives elsewhere), group-committed,
// appended durably by the leader, sent to every active follower with the
// leader's epoch (Transport.Replicate: a function call to another broker
// of the process, or a request to another process), and acknowledged only
// when each follower holds it durably. The high watermark then rises to
// the batch's end. A follower's failure fails the batch (the leader keeps
// its records, an append-only log is not rolled back); a follower whose
// removal from the active set is committed while the send is out no longer
// counts.

// pushRetryWait is how long a leader waits before sending again to a
// follower whose metadata has not reached the leader's epoch yet.
const pushRetryWait = 20 * time.Millisecond

// sendRequest is one caller's records waiting for a batch.
type sendRequest struct {
	payloads [][]byte
	done     chan struct{}
	// Set by the writer before done is closed.
	topic     string
	partition int
	recs      []log.Record
	leader    int
	brokers   []int
	err       error
	// unsettled is where a batch sent again was first written, when that
	// was not yet below the high watermark as the leader screened it
	// (settleDuplicates).
	unsettled *producerRun
}

func newSendRequest(payloads [][]byte) *sendRequest {
	return &sendRequest{payloads: payloads, done: make(chan struct{})}
}

// write writes payloads to partition p through its leader and returns
// where they landed once every active replica holds them: queued here when
// this process hosts the leader, else forwarded to the leader's process
// (Transport.Produce). A leader that moved meanwhile is followed, a few
// times. A leader's process that does not answer is a
// *LeaderUnavailableError naming it, never retried here: the write may
// have reached it.
func (c *Cluster) write(p *partition, payloads [][]byte) (ProduceResponse, error) {
	for attempt := 0; ; attempt++ {
		pm, err := c.partitionMeta(p)
		if err != nil {
			return ProduceResponse{}, err
		}
		var res ProduceResponse
		if c.hosts(pm.Leader) {
			req := newSendRequest(payloads)
			if err = c.submit(p, req); err == nil {
				res = produceResponseOf(req)
			}
		} else {
			// A leader replaced meanwhile (paused, cut off, failed over)
			// is not waited for: its client hears at once that it is
			// unavailable, and retries with the new one.
			ctx, cancel := c.untilLeaderMoves(p, pm, c.requestTimeout)
			res, err = c.transport.Produce(ctx, pm.Leader, ProduceRequest{Topic: p.topic, Partition: p.index, Payloads: payloads})
			cancel()
			err = c.leaderAnswer(p, pm.Leader, err)
		}
		if err == nil || attempt >= 3 || !errors.Is(err, ErrNotLeader) {
			return res, err
		}
		// The new leadership is being applied here: wait for it.
		c.awaitChange(p, pm, 500*time.Millisecond)
	}
}

// untilLeaderMoves is a context for a call to p's leader at pm: it ends
// after timeout, or as soon as this process's metadata has the
// partition's leadership past pm's epoch — a failover of a leader that
// does not answer — so that the call stops waiting for a leader that is
// one no more. Call cancel when the call returns.
func (c *Cluster) untilLeaderMoves(p *partition, pm PartitionMetadata, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	go func() {
		for {
			ch := c.store.Changed()
			if c.leaderMoved(p, pm) {
				cancel()
				return
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, cancel
}

// leaderMoved reports whether p's leadership is past pm's epoch in this
// process's metadata (or the partition is gone).
func (c *Cluster) leaderMoved(p *partition, pm PartitionMetadata) bool {
	now, err := readPartition(c.store, p.topic, p.index)
	return err != nil || now.LeaderEpoch != pm.LeaderEpoch
}

// awaitChange waits up to d for the next change of the metadata: a
// leadership that moved is being applied here.
func (c *Cluster) awaitChange(p *partition, pm PartitionMetadata, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	ch := c.store.Changed()
	if now, err := readPartition(c.store, p.topic, p.index); err == nil && now.LeaderEpoch != pm.LeaderEpoch {
		return
	}
	select {
	case <-ch:
	case <-t.C:
	}
}

func produceResponseOf(r *sendRequest) ProduceResponse {
	res := ProduceResponse{Leader: r.leader, Brokers: slices.Clone(r.brokers)}
	for _, rec := range r.recs {
		res.Records = append(res.Records, RecordPosition{Offset: rec.Offset, Timestamp: rec.Timestamp})
	}
	return res
}

// Produce writes a share of records to a partition whose leader this
// process hosts (what Transport.Produce carries): the write path's queue,
// as a write arriving here would. A partition led elsewhere is a
// *NotLeaderError naming its leader.
func (c *Cluster) Produce(ctx context.Context, to int, req ProduceRequest) (ProduceResponse, error) {
	p, err := c.partition(req.Topic, req.Partition)
	if err != nil {
		return ProduceResponse{}, err
	}
	pm, err := c.partitionMeta(p)
	if err != nil {
		return ProduceResponse{}, err
	}
	if !c.hosts(pm.Leader) || pm.Leader != to {
		return ProduceResponse{}, &NotLeaderError{Topic: p.topic, Partition: p.index, Broker: to, Leader: pm.Leader}
	}
	r := newSendRequest(req.Payloads)
	if err := c.submit(p, r); err != nil {
		return ProduceResponse{}, err
	}
	return produceResponseOf(r), nil
}

// submit queues req on the partition and waits until it is acknowledged or
// has failed. Whichever caller finds the partition idle takes the writer
// slot and writes batch after batch — everything already waiting, never
// waiting for more — until the queue is empty (group commit). A batch costs
// one leader append and one append per follower, so concurrent senders share
// fsyncs instead of queueing behind each other's. An operation waiting for
// the slot goes before the queued sends (see lockIdle).
func (c *Cluster) submit(p *partition, req *sendRequest) error {
	p.mu.Lock()
	if err := p.goneLocked(); err != nil {
		p.mu.Unlock()
		return err
	}
	p.queue = append(p.queue, req)
	if p.writing || p.held || p.exclusive > 0 {
		p.mu.Unlock()
		<-req.done
		return req.err
	}
	p.writing = true
	c.drainLocked(p)
	<-req.done
	return req.err
}

// enqueue queues req on the partition for its writer, in call order, and
// returns at once: a writer at work takes it with its next batch, else
// one is started for it (as unlockIdle starts one). req.done closes when
// it is acknowledged or has failed. Requests enqueued one after the other
// are appended in that order, and those that meet in the queue share a
// batch: one append and one fsync per replica.
func (c *Cluster) enqueue(p *partition, req *sendRequest) error {
	p.mu.Lock()
	if err := p.goneLocked(); err != nil {
		p.mu.Unlock()
		return err
	}
	p.queue = append(p.queue, req)
	start := !p.writing && !p.held && p.exclusive == 0
	if start {
		p.writing = true
	}
	p.mu.Unlock()
	if start {
		c.startWriter(p)
	}
	return nil
}

// writeQueued is write in two steps, for a caller with several writes in
// hand that must reach each partition in order (a Kafka connection's
// pipelined produce requests): when this process hosts the leader, the
// payloads are queued now, before writeQueued returns, and wait returns
// their outcome — a leader that moved meanwhile is followed as write
// follows it. Otherwise nothing happens until wait, which writes them
// (forwarded, reported so): the caller's waits, called in order, keep
// the order.
func (c *Cluster) writeQueued(p *partition, payloads [][]byte) (wait func() (ProduceResponse, error), forwarded bool) {
	pm, err := c.partitionMeta(p)
	if err != nil || !c.hosts(pm.Leader) {
		return func() (ProduceResponse, error) { return c.write(p, payloads) }, true
	}
	req := newSendRequest(payloads)
	if err := c.enqueue(p, req); err != nil {
		return func() (ProduceResponse, error) { return ProduceResponse{}, err }, false
	}
	return func() (ProduceResponse, error) {
		<-req.done
		if req.err != nil && errors.Is(req.err, ErrNotLeader) {
			return c.write(p, payloads)
		}
		return produceResponseOf(req), req.err
	}, false
}

// drainLocked writes the queued sends batch by batch while it owns the
// writer slot, stopping when the queue is empty or an operation is
// waiting, then gives the slot up. Sends queued on a partition of a
// deleted topic fail with ErrUnknownTopic. p.mu must be held with
// p.writing set; it is released on return.
func (c *Cluster) drainLocked(p *partition) {
	if err := p.goneLocked(); err != nil {
		// The topic was deleted while these sends waited: none is written.
		failAll(p.queue, err)
		for _, r := range p.queue {
			close(r.done)
		}
		p.queue = nil
	}
	for len(p.queue) > 0 && p.exclusive == 0 {
		batch := p.queue
		p.queue = nil
		p.mu.Unlock()
		c.writeBatch(p, batch)
		for _, r := range batch {
			close(r.done)
		}
		p.mu.Lock()
	}
	p.writing = false
	p.idle.Broadcast()
	p.mu.Unlock()
}

// writeBatch appends a batch on the leader and then on every active
// follower in parallel, and fills in every request's outcome. It runs in
// the writer slot. When every active replica stored the batch, the high
// watermark rises to its end. Each step is a function of its own, in the
// order it runs.
func (c *Cluster) writeBatch(p *partition, batch []*sendRequest) {
	pm, err := c.partitionMeta(p)
	if err != nil {
		failAll(batch, err)
		return
	}
	for _, r := range batch {
		r.topic, r.partition, r.leader = p.topic, p.index, pm.Leader
	}
	m, ll, err := c.leaderLog(p, pm)
	if err != nil {
		failAll(batch, err)
		return
	}
	good := admit(p, ll.MaxPayloadSize(), batch)
	if len(good) == 0 {
		return
	}
	followers := followersOf(pm.Leader, pm.Active)
	pm, good, recs, leaderDone, err := c.appendOnLeader(m, p, ll, good, len(followers) > 0)
	defer c.settleDuplicates(p, pm, batch)
	if err != nil {
		failAll(good, err)
		return
	}
	if len(good) == 0 {
		return // every request answered by the producer rules
	}
	followers = followersOf(pm.Leader, pm.Active)
	assignRecords(good, recs)
	acked, failed, errs := c.replicate(p, pm, ll, followers, recs)
	if leaderDone != nil {
		if err := <-leaderDone; err != nil {
			failAll(good, errors.Join(leaderError(p, pm.Leader, err), c.cutBack(p, pm, acked, recs[0].Offset)))
			return
		}
	}
	if len(failed) > 0 {
		failReplication(p, good, failed, errs)
		return
	}
	brokers := append([]int{pm.Leader}, acked...)
	slices.Sort(brokers)
	for _, r := range good {
		r.brokers = brokers
	}
	c.raiseHW(p, recs[len(recs)-1].Offset+1)
}

// failAll gives every request of reqs the outcome err.
func failAll(reqs []*sendRequest, err error) {
	for _, r := range reqs {
		r.err = err
	}
}

// admit fails each request holding a payload above limit (a payload too
// large fails its own request, not the whole batch) and returns the
// others, in order.
func admit(p *partition, limit int, batch []*sendRequest) (good []*sendRequest) {
	for _, r := range batch {
		if big := slices.IndexFunc(r.payloads, func(b []byte) bool { return len(b) > limit }); big >= 0 {
			r.err = fmt.Errorf("cluster: %s: record %d: %d bytes, maximum %d: %w", p, big, len(r.payloads[big]), limit, log.ErrPayloadTooLarge)
			continue
		}
		good = append(good, r)
	}
	return good
}

// appendOnLeader stores the records of reqs on the leader's log ll,
// which assigns their offsets (its log end) and timestamps (its clock),
// after the last check of the leadership, made under the replica's fmu as
// a follower's proof is: a leader replaced meanwhile appends nothing.
// Under the same lock it applies the idempotent producer rules
// (screenLocked): a request sent again is answered with its first
// write's offsets, and fresh holds the requests whose records were
// appended, in order. It returns the leadership the records were
// appended under. By default it appends durably before returning, and
// done is nil. With Options.ParallelLeaderWrite and followers to write,
// it only builds the records and starts the leader's append, whose
// outcome arrives on done, so that its fsync overlaps the followers'.
func (c *Cluster) appendOnLeader(m *member, p *partition, ll *segment.Log, reqs []*sendRequest, haveFollowers bool) (_ PartitionMetadata, fresh []*sendRequest, _ []log.Record, done <-chan error, _ error) {
	r := m.replica(replicaKey{p.topic, p.index})
	r.fmu.Lock()
	defer r.fmu.Unlock()
	pm, err := c.partitionMeta(p)
	if err != nil {
		return pm, reqs, nil, nil, err
	}
	if pm.Leader != m.id() {
		return pm, reqs, nil, nil, &NotLeaderError{Topic: p.topic, Partition: p.index, Broker: m.id(), Leader: pm.Leader}
	}
	if err := c.checkMinInsync(p, pm); err != nil {
		return pm, reqs, nil, nil, err
	}
	now := m.b.opts.Now().UnixNano()
	fresh, table, verdicts, counts, payloads := c.screenLocked(m, r, p, pm, ll, reqs, now)
	if len(fresh) == 0 {
		return pm, nil, nil, nil, nil
	}
	if err := c.leadRun(m, p, pm, ll); err != nil {
		return pm, fresh, nil, nil, err
	}
	if !c.opts.ParallelLeaderWrite || !haveFollowers {
		recs, err := ll.AppendBatch(payloads)
		if err != nil {
			return pm, fresh, nil, nil, leaderError(p, pm.Leader, err)
		}
		if table != nil {
			table.note(verdicts, counts, recs)
			c.maybeSnapshot(m, ll, table, recs[len(recs)-1], now, p.hw.Load())
		}
		return pm, fresh, recs, nil, nil
	}
	base, ts := ll.NextOffset(), now
	recs := make([]log.Record, len(payloads))
	for i, pl := range payloads {
		recs[i] = log.Record{Offset: base + uint64(i), Timestamp: ts, Payload: pl}
	}
	if table != nil {
		// Should the append fail, the log's end will not be the table's,
		// and the next write rebuilds it; a snapshot of records that never
		// reached the log does not fit it, and is passed over.
		table.note(verdicts, counts, recs)
		c.maybeSnapshot(m, ll, table, recs[len(recs)-1], now, p.hw.Load())
	}
	ch := make(chan error, 1)
	go func() { ch <- ll.AppendRecords(recs) }()
	return pm, fresh, recs, ch, nil
}

// checkMinInsync refuses a write to p, led at pm, with a
// *NotEnoughReplicasError when its active replicas (the leader included)
// are fewer than the topic's min.insync.replicas: the one check of both
// modes, made before anything is appended (and before a batch sent again
// is answered, as Kafka checks it before its log's duplicate screen).
func (c *Cluster) checkMinInsync(p *partition, pm PartitionMetadata) error {
	minInsync := c.opts.TopicDefaults.MinInsyncReplicas
	var override string
	c.store.Read(func(s *MetaState) { override = s.Meta.Topics[p.topic].Config[topic.MinInsyncReplicasKey] })
	if override != "" {
		// Canonical since it was stored (topic.ParseConfigOverrides).
		if v, err := topic.ConfigInt(topic.MinInsyncReplicasKey, override); err == nil {
			minInsync = v
		}
	}
	if int64(len(pm.Active)) < minInsync {
		return &NotEnoughReplicasError{Topic: p.topic, Partition: p.index, Active: len(pm.Active), MinInsync: int(minInsync)}
	}
	return nil
}

// leadRun makes sure the leader's next records, from ll's end, belong to
// a run of pm's epoch started since ll was opened, written down in the
// replica's leader-epoch history before they are appended.
func (c *Cluster) leadRun(m *member, p *partition, pm PartitionMetadata, ll *segment.Log) error {
	h, err := m.b.epochsOf(p.topic, p.index)
	if err == nil {
		err = h.lead(pm.LeaderEpoch, ll.NextOffset())
	}
	if err != nil {
		return leaderError(p, pm.Leader, err)
	}
	return nil
}

// assignRecords hands each request its share of recs, which hold the
// requests' payloads in order.
func assignRecords(good []*sendRequest, recs []log.Record) {
	at := 0
	for _, r := range good {
		r.recs = recs[at : at+len(r.payloads)]
		at += len(r.payloads)
	}
}

// replicate is the batch's fan-out: it sends recs to every follower of
// followers in parallel, and waits until each holds them durably or has
// left the active set (its removal committed while the send was out: it
// no longer counts). It returns the followers that took the records, and
// those that failed with their errors, each ascending.
func (c *Cluster) replicate(p *partition, pm PartitionMetadata, ll *segment.Log, followers []int, recs []log.Record) (acked, failed []int, errs []error) {
	if len(followers) == 0 {
		return nil, nil, nil
	}
	type outcome struct {
		id  int
		err error
	}
	out := make(chan outcome, len(followers))
	ctx, cancel := context.WithTimeout(context.Background(), c.pushTimeout)
	defer cancel()
	for _, id := range followers {
		go func() { out <- outcome{id, c.push(ctx, p, pm, ll, id, recs)} }()
	}
	pending := map[int]bool{}
	for _, id := range followers {
		pending[id] = true
	}
	for len(pending) > 0 {
		ch := c.store.Changed()
		select {
		case o := <-out:
			if !pending[o.id] {
				continue
			}
			delete(pending, o.id)
			switch {
			case o.err == nil:
				acked = append(acked, o.id)
			case c.stillActive(p, pm, o.id):
				failed = append(failed, o.id)
				errs = append(errs, fmt.Errorf("broker %d: %w", o.id, o.err))
			}
		case <-ch:
			for id := range pending {
				if !c.stillActive(p, pm, id) {
					delete(pending, id) // its removal is committed: stop waiting
				}
			}
		}
	}
	slices.Sort(acked)
	slices.Sort(failed)
	return acked, failed, errs
}

// stillActive reports whether follower id must still hold the leader's
// writes: the partition is still at pm's epoch and id is in its active
// set.
func (c *Cluster) stillActive(p *partition, pm PartitionMetadata, id int) bool {
	now, err := readPartition(c.store, p.topic, p.index)
	if err != nil || now.LeaderEpoch != pm.LeaderEpoch {
		return true // a write at an old epoch is never acknowledged for it
	}
	return slices.Contains(now.Active, id)
}

// push brings follower id up to the end of recs: it sends recs and, when
// the follower's log ends before them, first what it misses from the
// leader's log ll, in requests of at most maxPushBytes. With no recs it
// brings the follower to the log end as it is (a catch-up's copy).
func (c *Cluster) push(ctx context.Context, p *partition, pm PartitionMetadata, ll *segment.Log, id int, recs []log.Record) error {
	req := ReplicateRequest{Topic: p.topic, Partition: p.index, Epoch: pm.LeaderEpoch, Leader: pm.Leader,
		HighWatermark: p.hw.Load(), LogStart: ll.LogStart(), Records: recs}
	target := ll.NextOffset()
	if len(recs) > 0 {
		target = recs[len(recs)-1].Offset + 1
	}
	for attempt := 0; ; attempt++ {
		res, err := c.sendRecords(ctx, p, pm, id, req)
		var behind *BehindError
		switch {
		case err == nil:
			p.setFollowerEnd(id, res.End)
			if res.End >= target {
				return nil
			}
			// A probe or a short send: go on from where it ends.
			if req.Records, err = readRange(ll, res.End, target, maxPushBytes, 0); err != nil {
				return err
			}
		case errors.As(err, &behind) && c.opts.CatchUpOnWrite:
			upto := target
			if len(recs) > 0 {
				upto = recs[0].Offset
			}
			if behind.End >= upto {
				req.Records = recs
			} else if req.Records, err = readRange(ll, behind.End, upto, maxPushBytes, 0); err != nil {
				return err
			}
		case errors.Is(err, ErrEpochAhead) && attempt < 50:
			// Its metadata is behind ours: it catches up within moments.
			t := time.NewTimer(pushRetryWait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return err
			}
		default:
			return err
		}
		req.HighWatermark, req.LogStart = p.hw.Load(), ll.LogStart()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// sendRecords sends req, a leader's write, to follower id with the runs
// of the leader's history that hold its records, so that the follower's
// history follows its leader's (epochs.go).
func (c *Cluster) sendRecords(ctx context.Context, p *partition, pm PartitionMetadata, id int, req ReplicateRequest) (ReplicateResponse, error) {
	if n := len(req.Records); n > 0 {
		m, err := c.hosted(pm.Leader)
		if err != nil {
			return ReplicateResponse{}, err
		}
		h, err := m.b.epochsOf(p.topic, p.index)
		if err != nil {
			return ReplicateResponse{}, err
		}
		req.Runs = h.cover(req.Records[0].Offset, req.Records[n-1].Offset+1)
	}
	return c.transport.Replicate(ctx, id, req)
}

// failReplication gives every request a *ReplicationError naming the
// followers that failed to store the batch: the leader holds the records
// but they are not acknowledged.
func failReplication(p *partition, good []*sendRequest, failed []int, errs []error) {
	joined := errors.Join(errs...)
	for _, r := range good {
		r.err = &ReplicationError{Topic: p.topic, Partition: p.index, Offset: r.recs[0].Offset, Count: len(r.recs), BrokerIDs: failed, Err: joined}
	}
}

func leaderError(p *partition, leader int, err error) error {
	if unavailable(err) {
		return &LeaderUnavailableError{Topic: p.topic, Partition: p.index, BrokerID: leader, Err: err}
	}
	return fmt.Errorf("cluster: %s: leader broker %d: %w", p, leader, err)
}

// cutBack undoes a parallel batch on the followers that stored it when the
// leader did not, so that no follower holds a record its leader lacks. The
// records were never acknowledged. It returns what it could not undo.
func (c *Cluster) cutBack(p *partition, pm PartitionMetadata, stored []int, to uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.pushTimeout)
	defer cancel()
	var failed []error
	for _, id := range stored {
		if _, err := c.transport.Cut(ctx, id, CutRequest{Topic: p.topic, Partition: p.index, Epoch: pm.LeaderEpoch, Leader: pm.Leader, To: to}); err != nil {
			failed = append(failed, fmt.Errorf("cluster: %s: cut broker %d back to offset %d after the leader failed: %w", p, id, to, err))
		}
	}
	return errors.Join(failed...)
}
