package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/apiclient"
)

// This file is what the cluster tests write and how they check what they
// read back: acknowledged records, bounded producers that retry what the
// cluster refused for the moment, and the exactly-once check.

// ack is one acknowledged record.
type ack struct {
	value     string
	partition int
	offset    uint64
	// via is the node the produce was sent to.
	via int
	at  time.Time
}

// ackLog collects acknowledgements from many goroutines. It is safe for
// concurrent use.
type ackLog struct {
	// mu guards acks.
	mu   sync.Mutex
	acks []ack
}

func (a *ackLog) add(x ack) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acks = append(a.acks, x)
}

func (a *ackLog) all() []ack {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.acks)
}

// countSince counts the acknowledgements received after t.
func (a *ackLog) countSince(t time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, x := range a.acks {
		if x.at.After(t) {
			n++
		}
	}
	return n
}

// retryable reports whether a produce that failed with err may be sent
// again: the cluster answered unavailable (503: a leader is down or
// changing), or the connection failed. Anything else is an answer the
// test must look at.
func retryable(err error) bool {
	if errors.Is(err, apiclient.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error // every transport failure of net/http is one (*url.Error)
	return errors.As(err, &ne)
}

// produceTo writes one record to partition p through node via, bounded by
// timeout, and returns its acknowledgement.
func (c *testCluster) produceTo(ctx context.Context, via int, name string, p int, value string, timeout time.Duration) (ack, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.client(via).ProduceTo(rctx, name, p, []apiclient.ProduceRecord{{Value: []byte(value)}})
	if err != nil {
		return ack{}, err
	}
	if len(res.Records) != 1 || res.Records[0].Partition != p {
		return ack{}, fmt.Errorf("produce of %q to partition %d answered %+v", value, p, res.Records)
	}
	return ack{value: value, partition: p, offset: res.Records[0].Offset, via: via, at: time.Now()}, nil
}

// produceRetry writes one record to partition p through the nodes of via
// in turn. A refusal that a retry may cure (retryable) is retried, at most
// attempts times in all, each time with a new value (value(attempt)), so
// that a write that failed but stayed in the log is never mistaken for
// the retry's acknowledged one.
func (c *testCluster) produceRetry(ctx context.Context, via []int, name string, p int, value func(attempt int) string, attempts int) (ack, error) {
	var err error
	for attempt := range attempts {
		var a ack
		a, err = c.produceTo(ctx, via[attempt%len(via)], name, p, value(attempt), 10*time.Second)
		if err == nil {
			return a, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return ack{}, err
		}
		select {
		case <-ctx.Done():
			return ack{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return ack{}, err
}

// producers runs n goroutines that each write up to max records to
// partition p through the nodes of via, retrying what may be retried,
// until stop. Every acknowledgement goes to acks; an error that is not
// retryable fails the test. The returned function stops them and waits.
func (c *testCluster) producers(ctx context.Context, n, max int, via []int, name string, p int, acks *ackLog) (stop func()) {
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for i := 0; i < max && !stopped.Load(); i++ {
				a, err := c.produceRetry(ctx, via, name, p, func(attempt int) string { return fmt.Sprintf("w%d-%d-a%d", w, i, attempt) }, 50)
				switch {
				case err == nil:
					acks.add(a)
				case retryable(err):
					// Given up after many attempts: not acknowledged.
				default:
					c.t.Errorf("producer %d: record %d: %v", w, i, err)
					return
				}
			}
		})
	}
	return func() {
		stopped.Store(true)
		wg.Wait()
	}
}

// waitAcks waits until acks holds at least n acknowledgements received
// after since.
func (c *testCluster) waitAcks(ctx context.Context, acks *ackLog, since time.Time, n int, what string) {
	c.t.Helper()
	c.eventually(ctx, 30*time.Second, what, func() (bool, string) {
		got := acks.countSince(since)
		return got >= n, fmt.Sprintf("%d acknowledged", got)
	})
}

// readPartition reads every record of partition p below its high watermark
// through node via.
func (c *testCluster) readPartition(ctx context.Context, via int, name string, p int) []apiclient.FetchedRecord {
	c.t.Helper()
	var out []apiclient.FetchedRecord
	for page, next := 0, uint64(0); ; page++ {
		require.Less(c.t, page, 10000, "fetch %s/%d through node %d: no end after 10000 pages", name, p, via)
		// A node that has not yet applied a leader change forwards to
		// the old leader and answers unavailable: asked again, it reads
		// from the new one.
		var got *apiclient.FetchResponse
		c.eventually(ctx, 30*time.Second, fmt.Sprintf("fetch %s/%d from %d through node %d", name, p, next, via), func() (bool, string) {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var err error
			got, err = c.client(via).Fetch(rctx, name, p, next, 1000)
			if err != nil && !retryable(err) {
				c.t.Fatalf("fetch %s/%d from %d through node %d: %v", name, p, next, via, err)
			}
			return err == nil, fmt.Sprint(err)
		})
		if len(got.Records) == 0 {
			require.Equal(c.t, next, got.HighWatermark, "an empty fetch at %d ends below the high watermark", next)
			return out
		}
		out = append(out, got.Records...)
		next = got.NextOffset
	}
}

// requireAckedOnce requires recs, a partition read from offset 0, to be
// contiguous, to hold no value twice, and to hold every acknowledged
// record of acks at the offset it was acknowledged with.
func requireAckedOnce(t *testing.T, recs []apiclient.FetchedRecord, acks []ack) {
	t.Helper()
	at := map[string]uint64{}
	for i, r := range recs {
		require.Equal(t, uint64(i), r.Offset, "the records are contiguous from 0")
		old, dup := at[string(r.Value)]
		require.False(t, dup, "value %q at offsets %d and %d: every value was written once", r.Value, old, r.Offset)
		at[string(r.Value)] = r.Offset
	}
	for _, a := range acks {
		off, ok := at[a.value]
		require.True(t, ok, "acknowledged record %q (offset %d, through node %d) is lost", a.value, a.offset, a.via)
		require.Equal(t, a.offset, off, "acknowledged record %q is at another offset than it was acknowledged with", a.value)
	}
}

// requireSameLog requires two replica logs to hold the same records: the
// same offsets, timestamps and payloads.
func requireSameLog(t testing.TB, want, got []log.Record, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: the number of records", what)
	for i := range want {
		require.Equal(t, want[i].Offset, got[i].Offset, "%s: record %d", what, i)
		require.Equal(t, want[i].Timestamp, got[i].Timestamp, "%s: record %d's timestamp", what, i)
		require.Equal(t, string(want[i].Payload), string(got[i].Payload), "%s: record %d's payload", what, i)
	}
}

// waitSameLog waits until node id's replica log of a partition holds
// exactly node want's records (a follower may still be catching up a
// record its leader kept from a write that failed), then checks them
// record by record.
func (c *testCluster) waitSameLog(ctx context.Context, want, id int, name string, p int) {
	c.t.Helper()
	what := fmt.Sprintf("node %d's replica of %s/%d against node %d's", id, name, p, want)
	c.eventually(ctx, 30*time.Second, what, func() (bool, string) {
		a, err := c.scanReplica(want, name, p)
		if err != nil {
			return false, err.Error()
		}
		b, err := c.scanReplica(id, name, p)
		if err != nil {
			return false, err.Error()
		}
		if m := cluster.CompareRecords(a, b); m.Differs || len(a) != len(b) {
			return false, fmt.Sprintf("%d and %d records, first difference at index %d: %s", len(a), len(b), m.Index, m.Reason)
		}
		return true, ""
	})
	requireSameLog(c.t, c.replicaLog(want, name, p), c.replicaLog(id, name, p), what)
}

// values lists the payloads of recs as strings.
func values(recs []log.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
	}
	return out
}
