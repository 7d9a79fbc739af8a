package topic

import (
	"fmt"
	"slices"
	"strings"
)

// BatchError reports a batch write in which the writes to some partitions
// failed: an AppendBatch, or the SendBatch of a producer above it
// (client.Producer, cluster.Producer), which all return this one type. Every
// record routed to a partition named here was NOT acknowledged; every other
// record of the batch WAS acknowledged and is durable, and its result is
// filled in. Every result carries its partition, so Failed(result.Partition)
// tells the two apart.
type BatchError struct {
	// Topic is the topic's name.
	Topic string
	// Partitions maps each failed partition id to its error.
	Partitions map[int]error
}

// Failed reports whether the records routed to partition p were refused.
func (e *BatchError) Failed(p int) bool {
	_, ok := e.Partitions[p]
	return ok
}

func (e *BatchError) ids() []int {
	ids := make([]int, 0, len(e.Partitions))
	for p := range e.Partitions {
		ids = append(ids, p)
	}
	slices.Sort(ids)
	return ids
}

func (e *BatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "topic %q: batch append failed on %d partition(s):", e.Topic, len(e.Partitions))
	for _, p := range e.ids() {
		fmt.Fprintf(&b, " [partition %d: %v]", p, e.Partitions[p])
	}
	return b.String()
}

// Unwrap returns the partitions' errors in partition order, so errors.Is and
// errors.As see each of them (log.ErrFailed, log.ErrClosed, ...).
func (e *BatchError) Unwrap() []error {
	errs := make([]error, 0, len(e.Partitions))
	for _, p := range e.ids() {
		errs = append(errs, e.Partitions[p])
	}
	return errs
}

// AppendBatch routes every message as Append would and appends them with one
// log.AppendBatch per partition involved (one write and one fsync each), the
// partitions written concurrently. Messages bound for one partition keep
// their input order there and get consecutive offsets. Results are in input
// order.
//
// A payload above the partitions' size limit fails the whole batch before
// anything is written (error wrapping log.ErrPayloadTooLarge, nil results).
// When the appends to some partitions fail, AppendBatch returns every result
// together with a *BatchError naming those partitions: a record whose
// partition the error names was not acknowledged (its result carries only
// the Partition), every other record was acknowledged and is durable. An
// empty batch does nothing.
func (t *Topic) AppendBatch(msgs []Message) ([]AppendResult, error) {
	if err := CheckPayloads(msgs, t.maxPayload); err != nil {
		return nil, fmt.Errorf("topic %q: batch append: %w", t.name, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	pl := t.router.Plan(msgs)
	results := make([]AppendResult, len(msgs))
	for i, p := range pl.Partition {
		results[i].Partition = p
	}
	err := pl.Write(t.name, func(p int, idx []int) error {
		recs, err := t.parts[p].AppendBatch(Payloads(msgs, idx))
		if err != nil {
			return fmt.Errorf("append %d records to partition %d: %w", len(idx), p, err)
		}
		for j, i := range idx {
			results[i] = AppendResult{Partition: p, Offset: recs[j].Offset, Record: recs[j]}
		}
		return nil
	})
	return results, err
}
