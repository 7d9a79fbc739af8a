package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/server/apiclient"
)

// The workload's pacing: every loop waits between iterations, so that the
// load stays bounded on a shared machine.
const (
	writePause = 10 * time.Millisecond
	// errorPause follows a write that was not acknowledged: a producer
	// facing a fault does not spin.
	errorPause   = 100 * time.Millisecond
	readPause    = 50 * time.Millisecond
	groupPause   = 100 * time.Millisecond
	writeTimeout = 5 * time.Second
	readTimeout  = 3 * time.Second
	// fetchMax is the most records a reader asks for at once.
	fetchMax = 500
)

// Workload is what runs against the cluster while faults strike.
type Workload struct {
	Nodes      *Nodes
	History    *History
	Topic      string
	Partitions int
	// HTTPProducers and KafkaProducers count the producers of each kind.
	HTTPProducers, KafkaProducers int
	// Group is the consumer group that commits.
	Group string
	// Logf receives a line when the group member's assignment changes.
	Logf func(format string, args ...any)
}

// Run runs every producer, reader and the group until ctx ends, and
// returns once they all have.
func (w *Workload) Run(ctx context.Context) {
	done := make(chan struct{})
	n := 0
	start := func(f func(context.Context)) {
		n++
		go func() {
			defer func() { done <- struct{}{} }()
			f(ctx)
		}()
	}
	for i := 1; i <= w.HTTPProducers; i++ {
		start(func(ctx context.Context) { w.httpProducer(ctx, i) })
	}
	for i := 1; i <= w.KafkaProducers; i++ {
		start(func(ctx context.Context) { w.kafkaProducer(ctx, i) })
	}
	for _, node := range w.Nodes.Nodes {
		start(func(ctx context.Context) { w.reader(ctx, node) })
	}
	if w.Group != "" {
		start(w.groupMember)
	}
	for range n {
		<-done
	}
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// pause is how long a producer waits after a write with this outcome.
func pause(o Outcome) time.Duration {
	if o == Acked {
		return writePause
	}
	return errorPause
}

// httpOutcome classifies a failed HTTP produce: a refused connection or a
// 4xx answer means the record was not written; anything else (a timeout,
// a connection lost mid-request, a 5xx whose write may have reached the
// leader's log) leaves it unknown.
func httpOutcome(err error) Outcome {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return Failed
	}
	var apiErr *apiclient.Error
	if errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500 {
		return Failed
	}
	return Unknown
}

// httpProducer writes values h<i>-<seq> one at a time, partition by
// partition, through node i first and the next node after every error.
func (w *Workload) httpProducer(ctx context.Context, i int) {
	name := fmt.Sprintf("http-%d", i)
	via := (i - 1) % len(w.Nodes.Nodes)
	for seq := 0; ctx.Err() == nil; seq++ {
		p := seq % w.Partitions
		rec := Write{Value: fmt.Sprintf("h%d-%d", i, seq), Producer: name, Partition: p, Start: time.Now()}
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		res, err := w.Nodes.Nodes[via].Client.ProduceTo(wctx, w.Topic, p, []apiclient.ProduceRecord{{Value: []byte(rec.Value)}})
		cancel()
		rec.End = time.Now()
		switch {
		case err == nil && len(res.Records) == 1 && res.Records[0].Error == nil:
			rec.Outcome, rec.Partition, rec.Offset = Acked, res.Records[0].Partition, res.Records[0].Offset
		case err == nil:
			rec.Outcome, rec.Error = Unknown, fmt.Sprintf("an answer of %d records", len(res.Records))
		default:
			if ctx.Err() != nil {
				// The run ended during the request: it stays in the
				// history as unknown, which it is.
				rec.Outcome, rec.Error = Unknown, err.Error()
				w.History.AddWrite(rec)
				return
			}
			rec.Outcome, rec.Error = httpOutcome(err), err.Error()
			via = (via + 1) % len(w.Nodes.Nodes)
		}
		w.History.AddWrite(rec)
		if !sleep(ctx, pause(rec.Outcome)) {
			return
		}
	}
}

// kafkaProducer writes values k<i>-<seq> with a Kafka client (franz-go)
// with its defaults: acks=all, idempotent. The client retries inside an
// attempt, with the same producer id and sequence, so the partition's
// leader stores each value once: none of its writes may be in the log
// twice, acknowledged or not.
func (w *Workload) kafkaProducer(ctx context.Context, i int) {
	name := fmt.Sprintf("kafka-%d", i)
	var seeds []string
	for _, n := range w.Nodes.Nodes {
		seeds = append(seeds, n.Kafka)
		if w.Nodes.Mode == ModeEmbedded {
			for b := 1; b < 3; b++ {
				seeds = append(seeds, net.JoinHostPort("127.0.0.1", fmt.Sprint(n.kafkaPort+b)))
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(writeTimeout),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }), kgo.DialTimeout(2*time.Second))
	if err != nil {
		w.History.AddProblem("%s: the Kafka client: %v", name, err)
		return
	}
	defer cl.Close()
	for seq := 0; ctx.Err() == nil; seq++ {
		p := seq % w.Partitions
		rec := Write{Value: fmt.Sprintf("k%d-%d", i, seq), Producer: name, Idempotent: true, Partition: p, Start: time.Now()}
		wctx, cancel := context.WithTimeout(ctx, writeTimeout+time.Second)
		r := &kgo.Record{Topic: w.Topic, Partition: int32(p), Value: []byte(rec.Value)}
		err := cl.ProduceSync(wctx, r).FirstErr()
		cancel()
		rec.End = time.Now()
		if err == nil {
			rec.Outcome, rec.Partition, rec.Offset = Acked, int(r.Partition), uint64(r.Offset)
		} else {
			rec.Outcome, rec.Error = Unknown, err.Error()
		}
		w.History.AddWrite(rec)
		if ctx.Err() != nil || !sleep(ctx, pause(rec.Outcome)) {
			return
		}
	}
}

// reader reads every partition through one node from the start, round
// and round, and records every record it sees.
func (w *Workload) reader(ctx context.Context, n *Node) {
	next := make([]uint64, w.Partitions)
	for ctx.Err() == nil {
		for p := range w.Partitions {
			rctx, cancel := context.WithTimeout(ctx, readTimeout)
			res, err := n.Client.Fetch(rctx, w.Topic, p, next[p], fetchMax)
			cancel()
			if err != nil {
				continue
			}
			now := time.Now()
			reads := make([]Read, 0, len(res.Records))
			for _, r := range res.Records {
				reads = append(reads, Read{Via: n.ID, Partition: p, Offset: r.Offset, Value: string(r.Value), At: now})
			}
			w.History.AddReads(reads)
			if res.NextOffset > next[p] {
				next[p] = res.NextOffset
			}
		}
		if !sleep(ctx, readPause) {
			return
		}
	}
}

// groupMember is one member of an HTTP consumer group (docs/groups.md):
// it joins, and for every partition assigned reads the committed offset
// back, reads on from it and commits where it got to. Fenced or
// forgotten, it joins again. Every commit and every offset read back is
// recorded, in order.
func (w *Workload) groupMember(ctx context.Context) {
	var memberID string
	var epoch int32
	var owned []apiclient.GroupTopicPartitions
	via := 0
	for ctx.Err() == nil {
		cl := w.Nodes.Nodes[via].Client
		hctx, cancel := context.WithTimeout(ctx, readTimeout)
		req := apiclient.GroupHeartbeatRequest{MemberID: memberID, MemberEpoch: epoch, Owned: owned, ClientID: "chaos"}
		if epoch == 0 {
			req.Topics = []string{w.Topic}
		}
		hb, err := cl.GroupHeartbeat(hctx, w.Group, req)
		cancel()
		if err != nil {
			if errors.Is(err, apiclient.ErrFencedMemberEpoch) || errors.Is(err, apiclient.ErrUnknownMemberID) {
				if w.Logf != nil {
					w.Logf("group %s: member %s joins again: %v", w.Group, memberID, err)
				}
				epoch, owned = 0, nil
			} else {
				via = (via + 1) % len(w.Nodes.Nodes)
			}
			sleep(ctx, groupPause)
			continue
		}
		if w.Logf != nil && (hb.MemberEpoch != epoch || fmt.Sprint(hb.Assignment) != fmt.Sprint(owned)) {
			w.Logf("group %s: member %s epoch %d assigned %v", w.Group, hb.MemberID, hb.MemberEpoch, hb.Assignment)
		}
		memberID, epoch, owned = hb.MemberID, hb.MemberEpoch, hb.Assignment
		for _, tp := range hb.Assignment {
			for _, p := range tp.Partitions {
				if err := w.consumeAndCommit(ctx, cl, memberID, epoch, int(p)); err != nil {
					if errors.Is(err, apiclient.ErrFencedMemberEpoch) || errors.Is(err, apiclient.ErrUnknownMemberID) {
						epoch, owned = 0, nil
					}
				}
			}
		}
		if !sleep(ctx, groupPause) {
			return
		}
	}
}

// consumeAndCommit reads partition p's committed offset back, reads on
// from it and commits past what it read.
func (w *Workload) consumeAndCommit(ctx context.Context, cl *apiclient.Client, member string, epoch int32, p int) error {
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	desc, err := cl.Group(rctx, w.Group)
	if err != nil {
		return err
	}
	from := uint64(0)
	for _, o := range desc.Offsets {
		if o.Topic == w.Topic && o.Partition == p && o.CommittedOffset != nil {
			from = *o.CommittedOffset
			w.History.AddCommit(Commit{Group: w.Group, Partition: p, Kind: CommitObserved, Offset: from, At: time.Now()})
		}
	}
	res, err := cl.Fetch(rctx, w.Topic, p, from, 100)
	if err != nil {
		return err
	}
	if len(res.Records) == 0 {
		return nil
	}
	c := Commit{Group: w.Group, Partition: p, Kind: CommitAcked, Offset: res.NextOffset, MemberEpoch: epoch, HighWatermark: res.HighWatermark}
	_, err = cl.CommitGroupOffset(rctx, w.Group, w.Topic, p, member, epoch, res.NextOffset)
	c.At = time.Now()
	var apiErr *apiclient.Error
	switch {
	case err == nil:
	case errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500:
		return err // refused: nothing committed
	default:
		c.Kind = CommitUnknown
	}
	w.History.AddCommit(c)
	return err
}
