package cluster

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
)

// Producer writes to a replicated topic through each partition's leader. It
// routes with the topic package's own rule, a topic.Router the topic's
// producers share: a non-nil key (even an empty one) goes to
// topic.PartitionForKey, a nil key round robin. A Producer borrows the Cluster
// and never closes it. It is safe for concurrent use.
type Producer struct {
	c     *Cluster
	topic string
}

// NewProducer returns a producer for one topic of c. An unknown topic is
// reported by the first Send.
func NewProducer(c *Cluster, topicName string) *Producer {
	return &Producer{c: c, topic: topicName}
}

// SendResult says where a record landed and who holds it: the result every
// PyStream producer returns (client.SendResult: topic, partition, offset,
// timestamp), plus the replicas that hold it.
type SendResult struct {
	client.SendResult
	// LeaderBrokerID is the broker that accepted the write.
	LeaderBrokerID int
	// Brokers are the brokers that durably hold the record: the partition's
	// active replicas, ascending.
	Brokers []int
}

// Send writes one record and returns only when every active replica of its
// partition holds it durably. The leader assigns offset and timestamp and
// appends first; then every active follower stores that exact record, the
// followers in parallel.
//
// Errors: *LeaderUnavailableError when the leader's broker is closed (nothing
// fails over on its own); *ReplicationError when the leader stored the
// record but a follower did not — the write is not acknowledged, the leader
// keeps the record and the follower lags until CatchUp.
func (p *Producer) Send(key, payload []byte) (SendResult, error) {
	t, err := p.c.topic(p.topic)
	if err != nil {
		return SendResult{}, err
	}
	part := t.parts[t.router.Route(key)]
	req := &sendRequest{payloads: [][]byte{payload}, done: make(chan struct{})}
	if err := p.c.submit(part, req); err != nil {
		return SendResult{}, err
	}
	return req.result(0), nil
}

// SendBatch writes many records: every partition's share with one leader
// append and one append per follower (one fsync each), the partitions in
// parallel. Results are in input order and every one carries its Topic and
// Partition.
//
// The result has the topic's shape (topic.Topic.AppendBatch). A payload
// above MaxPayloadSize fails the whole batch before anything is written or
// routed (an error wrapping log.ErrPayloadTooLarge, nil results). If the
// sends to some partitions fail, SendBatch returns every result together
// with a *topic.BatchError naming those partitions. A record whose
// Partition the error names (BatchError.Failed) was not acknowledged and
// its result carries only Topic and Partition; every other record was
// acknowledged and its result is complete. An empty batch does nothing.
func (p *Producer) SendBatch(msgs []topic.Message) ([]SendResult, error) {
	t, err := p.c.topic(p.topic)
	if err != nil {
		return nil, err
	}
	if err := topic.CheckPayloads(msgs, p.c.MaxPayloadSize()); err != nil {
		return nil, fmt.Errorf("cluster: %s: send batch: %w", t.name, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	pl := t.router.Plan(msgs)
	results := make([]SendResult, len(msgs))
	for i, pi := range pl.Partition {
		results[i].Topic, results[i].Partition = t.name, pi
	}
	err = pl.Write(t.name, func(pi int, idx []int) error {
		req := &sendRequest{payloads: topic.Payloads(msgs, idx), done: make(chan struct{})}
		if err := p.c.submit(t.parts[pi], req); err != nil {
			return err
		}
		for k, i := range idx {
			results[i] = req.result(k)
		}
		return nil
	})
	return results, err
}

// SendBatchTo writes every record of msgs to one partition, whatever their
// keys: Kafka's explicit partition, for a caller that does its own
// placement. The records are written as one batch (one leader append and
// one append per follower), acknowledged together or not at all. A
// partition the topic does not have is an error wrapping
// topic.ErrPartitionOutOfRange, and payloads are checked as SendBatch checks them,
// before anything is written. On failure every result carries its Topic
// and Partition only. An empty batch does nothing.
func (p *Producer) SendBatchTo(partition int, msgs []topic.Message) ([]SendResult, error) {
	part, err := p.c.partition(p.topic, partition)
	if err != nil {
		return nil, err
	}
	if err := topic.CheckPayloads(msgs, p.c.MaxPayloadSize()); err != nil {
		return nil, fmt.Errorf("cluster: %s: send batch: %w", part, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	idx := make([]int, len(msgs))
	for i := range idx {
		idx[i] = i
	}
	req := &sendRequest{payloads: topic.Payloads(msgs, idx), done: make(chan struct{})}
	results := make([]SendResult, len(msgs))
	if err := p.c.submit(part, req); err != nil {
		for i := range results {
			results[i].Topic, results[i].Partition = p.topic, partition
		}
		return results, err
	}
	for i := range results {
		results[i] = req.result(i)
	}
	return results, nil
}

// MaxPayloadSize is the largest payload a record may carry: the limit the
// replica logs of every broker the cluster starts enforce,
// Options.Broker.MaxPayloadSize after defaults. A broker opened elsewhere and
// handed to RegisterBroker enforces its own BrokerOptions; a leader refuses a
// payload above its log's limit either way. A caller that must refuse a record
// before anything of its request is written checks it against this.
func (c *Cluster) MaxPayloadSize() int {
	return c.opts.Broker.MaxPayloadSize
}

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
}

func (r *sendRequest) result(i int) SendResult {
	return SendResult{
		SendResult:     client.SendResult{Topic: r.topic, Partition: r.partition, Offset: r.recs[i].Offset, Timestamp: r.recs[i].Timestamp},
		LeaderBrokerID: r.leader,
		Brokers:        slices.Clone(r.brokers),
	}
}

// submit queues req on the partition and waits until it is acknowledged or
// has failed. Whichever caller finds the partition idle takes the writer
// slot and writes batch after batch — everything already waiting, never
// waiting for more — until the queue is empty (group commit). A batch costs
// one leader append and one append per follower, so concurrent senders share
// fsyncs instead of queueing behind each other's. A failover, recovery or
// catch-up waiting for the slot goes before the queued sends (see lockIdle).
func (c *Cluster) submit(p *partition, req *sendRequest) error {
	p.mu.Lock()
	if err := p.goneLocked(); err != nil {
		p.mu.Unlock()
		return err
	}
	p.queue = append(p.queue, req)
	if p.writing || p.exclusive > 0 {
		p.mu.Unlock()
		<-req.done
		return req.err
	}
	p.writing = true
	c.drainLocked(p)
	<-req.done
	return req.err
}

// drainLocked writes the queued sends batch by batch while it owns the
// writer slot, stopping when the queue is empty or an exclusive call is
// waiting, then gives the slot up. Sends queued on a partition of a deleted
// topic fail with ErrUnknownTopic. p.mu must be held with p.writing set; it
// is released on return.
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
		leader, active := p.leader, slices.Clone(p.active)
		p.mu.Unlock()
		end, ok := c.writeBatch(p, leader, active, batch)
		for _, r := range batch {
			close(r.done)
		}
		p.mu.Lock()
		if ok {
			// Every active replica holds everything below end.
			c.raiseHWLocked(p, end)
		}
	}
	p.writing = false
	p.idle.Broadcast()
	p.mu.Unlock()
}

// writeBatch appends a batch on the leader and then on every active
// follower in parallel, and fills in every request's outcome. It runs in the
// writer slot, so leadership cannot change underneath it. When every active
// replica stored the batch, ok is true and end is the leader's log end after
// it. Each step is a function of its own, in the order it runs.
func (c *Cluster) writeBatch(p *partition, leader int, active []int, batch []*sendRequest) (end uint64, ok bool) {
	for _, r := range batch {
		r.topic, r.partition, r.leader = p.topic, p.index, leader
	}
	ll, err := c.replicaLog(p, leader)
	if err != nil {
		failAll(batch, leaderError(p, leader, err))
		return 0, false
	}
	good, payloads := admit(p, ll.MaxPayloadSize(), batch)
	if len(good) == 0 {
		return 0, false
	}
	followers := followersOf(leader, active)
	recs, leaderDone, err := c.appendOnLeader(ll, leader, payloads, len(followers) > 0)
	if err != nil {
		failAll(good, leaderError(p, leader, err))
		return 0, false
	}
	assignRecords(good, recs)
	errs := c.replicate(p, followers, recs)
	if leaderDone != nil {
		if err := <-leaderDone; err != nil {
			failAll(good, errors.Join(leaderError(p, leader, err), c.cutBack(p, followers, errs, recs[0].Offset)))
			return 0, false
		}
	}
	if failReplication(p, good, followers, errs) {
		return 0, false
	}
	for _, r := range good {
		r.brokers = active
	}
	return recs[len(recs)-1].Offset + 1, true
}

// failAll gives every request of reqs the outcome err.
func failAll(reqs []*sendRequest, err error) {
	for _, r := range reqs {
		r.err = err
	}
}

// admit fails each request holding a payload above limit (a payload too
// large fails its own request, not the whole batch) and returns the others
// with their payloads, in order.
func admit(p *partition, limit int, batch []*sendRequest) (good []*sendRequest, payloads [][]byte) {
	for _, r := range batch {
		if big := slices.IndexFunc(r.payloads, func(b []byte) bool { return len(b) > limit }); big >= 0 {
			r.err = fmt.Errorf("cluster: %s: record %d: %d bytes, maximum %d: %w", p, big, len(r.payloads[big]), limit, log.ErrPayloadTooLarge)
			continue
		}
		good = append(good, r)
		payloads = append(payloads, r.payloads...)
	}
	return good, payloads
}

// followersOf is the active replicas other than the leader, in order.
func followersOf(leader int, active []int) []int {
	var followers []int
	for _, id := range active {
		if id != leader {
			followers = append(followers, id)
		}
	}
	return followers
}

// appendOnLeader stores payloads on the leader's log ll, which assigns
// their offsets (its log end) and timestamp (its clock). By default it
// appends durably before returning, and done is nil. With
// Options.ParallelLeaderWrite and followers to write, it only builds the
// records and starts the leader's append, whose outcome arrives on done, so
// that its fsync overlaps the followers'.
func (c *Cluster) appendOnLeader(ll *segment.Log, leader int, payloads [][]byte, haveFollowers bool) (recs []log.Record, done <-chan error, err error) {
	if !c.opts.ParallelLeaderWrite || !haveFollowers {
		recs, err = ll.AppendBatch(payloads)
		return recs, nil, err
	}
	base, ts := ll.NextOffset(), c.leaderNow(leader)
	recs = make([]log.Record, len(payloads))
	for i, pl := range payloads {
		recs[i] = log.Record{Offset: base + uint64(i), Timestamp: ts, Payload: pl}
	}
	ch := make(chan error, 1)
	go func() { ch <- ll.AppendRecords(recs) }()
	return recs, ch, nil
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

// replicate stores the leader's exact records on every follower, the
// followers in parallel, and returns each follower's error (nil for
// success) in followers' order.
func (c *Cluster) replicate(p *partition, followers []int, recs []log.Record) []error {
	errs := make([]error, len(followers))
	var wg sync.WaitGroup
	for i, id := range followers {
		wg.Go(func() {
			l, err := c.replicaLog(p, id)
			if err == nil {
				err = l.AppendRecords(recs)
			}
			if err != nil {
				errs[i] = fmt.Errorf("broker %d: %w", id, err)
			}
		})
	}
	wg.Wait()
	return errs
}

// failReplication reports whether a follower failed to store the batch, and
// if so gives every request a *ReplicationError naming the failed
// followers: the leader holds the records but they are not acknowledged.
func failReplication(p *partition, good []*sendRequest, followers []int, errs []error) bool {
	var failed []int
	for i, err := range errs {
		if err != nil {
			failed = append(failed, followers[i])
		}
	}
	if len(failed) == 0 {
		return false
	}
	joined := errors.Join(errs...)
	for _, r := range good {
		r.err = &ReplicationError{Topic: p.topic, Partition: p.index, Offset: r.recs[0].Offset, Count: len(r.recs), BrokerIDs: failed, Err: joined}
	}
	return true
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
func (c *Cluster) cutBack(p *partition, followers []int, errs []error, to uint64) error {
	var failed []error
	for i, id := range followers {
		if errs[i] != nil {
			continue
		}
		l, err := c.replicaLog(p, id)
		if err == nil {
			err = l.Truncate(to)
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("cluster: %s: cut broker %d back to offset %d after the leader failed: %w", p, id, to, err))
		}
	}
	return errors.Join(failed...)
}

// leaderNow is the leader broker's clock.
func (c *Cluster) leaderNow(id int) int64 {
	if b := c.broker(id); b != nil {
		return b.opts.Now().UnixNano()
	}
	return time.Now().UnixNano()
}
