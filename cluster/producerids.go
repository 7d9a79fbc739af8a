package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/pystream/pystream/log/durable"
)

// This file hands out producer ids: the numbers an idempotent producer
// (Kafka's InitProducerId, KIP-98) is known by, unique across the cluster
// and never reused, not even after a restart or a failover of the
// metadata. Every process reserves ids in blocks through the metadata
// store and hands them out from memory; a block is durable in the store
// before its first id is handed out, so that no later reservation — by
// this process after a restart, or by any other — can return it again. A
// process's unused ids are skipped after it restarts, never reused. In one
// process the store is <root>/producer.ids, the next id never reserved; in
// cluster mode MetaState.NextProducerID, advanced by
// OpAllocateProducerIDs (docs/design.md § Producer id blocks).

// ProducerIDBlock is how many producer ids one allocation through the metadata store reserves.
const ProducerIDBlock = 1000

// MaxProducerIDCount bounds one reservation: a command asking for more is
// refused, so that a malformed one cannot burn the id space.
const MaxProducerIDCount = 1 << 20

// ProducerIDsFileName is, inside the root of a cluster of one process, the
// file that holds the next producer id no block has reserved yet.
const ProducerIDsFileName = "producer.ids"

// ProducerIDsVersion is the producer.ids version this package writes and
// reads.
const ProducerIDsVersion = 1

// maxProducerIDsSize bounds the producer.ids a reader accepts: the file is
// one short line.
const maxProducerIDsSize = 4 << 10

// producerIDs is what a Cluster keeps of the block it hands producer ids
// from (newProducerIDs). It is safe for concurrent use.
type producerIDs struct {
	// lock holds a token while its holder reads or changes next and end,
	// and while it reserves a block, so that concurrent callers reserve
	// one block, not one each. A channel rather than a mutex: a caller
	// waiting behind a reservation (a Raft proposal, in cluster mode)
	// gives up when its context ends.
	lock chan struct{}
	// next is the next id to hand out, end the first past the block:
	// [next, end) are reserved and unused.
	next, end int64
}

// newProducerIDs holds no block: the first call reserves one.
func newProducerIDs() *producerIDs { return &producerIDs{lock: make(chan struct{}, 1)} }

// NewProducerID returns a producer id never handed out before in this cluster, by any process, before or after a restart: ids come from blocks reserved through the metadata store (durably, before the first id of a block is handed out), and a process's unused ids are skipped after its restart, never reused. Safe for concurrent use. The first id is 0 (Kafka's -1 means none).
func (c *Cluster) NewProducerID(ctx context.Context) (int64, error) {
	c.mu.RLock()
	closed := c.closed
	c.mu.RUnlock()
	if closed {
		return -1, ErrClosed
	}
	p := c.producerIDs
	select {
	case p.lock <- struct{}{}:
	case <-ctx.Done():
		return -1, fmt.Errorf("cluster: wait for a producer id: %w", ctx.Err())
	}
	defer func() { <-p.lock }()
	if p.next == p.end {
		first, err := c.store.AllocateProducerIDs(ctx, ProducerIDBlock)
		if err != nil {
			return -1, fmt.Errorf("cluster: reserve producer ids: %w", err)
		}
		if first < 0 || first > math.MaxInt64-ProducerIDBlock {
			return -1, fmt.Errorf("cluster: reserve producer ids: the store answered block %d: %w", first, ErrInvalidArgument)
		}
		p.next, p.end = first, first+ProducerIDBlock
	}
	id := p.next
	p.next++
	return id, nil
}

// reserveProducerIDs checks a reservation of count ids from next, the
// first id never reserved, and returns the next one after it. Both stores
// decide by it.
func reserveProducerIDs(next, count int64) (int64, error) {
	if count < 1 || count > MaxProducerIDCount {
		return 0, fmt.Errorf("cluster: reserve %d producer ids: from 1 to %d: %w", count, MaxProducerIDCount, ErrInvalidArgument)
	}
	if next < 0 {
		return 0, fmt.Errorf("cluster: reserve producer ids: next id %d is negative: %w", next, ErrInvalidArgument)
	}
	if next > math.MaxInt64-count {
		return 0, fmt.Errorf("cluster: reserve %d producer ids from %d: %w", count, next, ErrProducerIDsExhausted)
	}
	return next + count, nil
}

// allocateProducerIDs applies OpAllocateProducerIDs: it reserves
// c.ProducerIDs ids from s.NextProducerID and answers the first. Nothing
// is journaled: a reservation is a counter, not an operation.
//
// A proposal may be applied twice (raftStore.propose retries one whose
// answer was lost, and the first may have committed): each application
// reserves a block of its own, and the block nobody was told of is
// wasted, never handed out — which is all uniqueness needs.
func (s *MetaState) allocateProducerIDs(c MetaCommand) (MetaResult, error) {
	next, err := reserveProducerIDs(s.NextProducerID, c.ProducerIDs)
	if err != nil {
		return MetaResult{}, err
	}
	first := s.NextProducerID
	s.NextProducerID = next
	return MetaResult{Summary: fmt.Sprintf("producer ids %d to %d reserved", first, next-1), FirstProducerID: &first}, nil
}

// producerIDsPath is <root>/producer.ids.
func (f *fileStore) producerIDsPath() string { return filepath.Join(f.root, ProducerIDsFileName) }

// AllocateProducerIDs reserves count ids by writing the next id after them
// to producer.ids atomically (temp file, fsync, rename, directory fsync)
// before it answers the first. After a crash at any step the file holds
// the old next id, and then nothing of the block was handed out, or the
// new one. A failed write reserves nothing in memory, and the next call
// writes again; a damaged file refuses every reservation
// (*ProducerIDsError) and is never rewritten.
func (f *fileStore) AllocateProducerIDs(ctx context.Context, count int64) (int64, error) {
	f.producerIDsMu.Lock()
	defer f.producerIDsMu.Unlock()
	if !f.producerIDsRead {
		next, err := readProducerIDs(f.fsys, f.producerIDsPath())
		if err != nil {
			return 0, err
		}
		f.nextProducerID, f.producerIDsRead = next, true
	}
	next, err := reserveProducerIDs(f.nextProducerID, count)
	if err != nil {
		return 0, err
	}
	if err := durable.WriteFile(f.fsys, f.producerIDsPath(), EncodeProducerIDs(next)); err != nil {
		return 0, fmt.Errorf("cluster: write %s: %w", f.producerIDsPath(), err)
	}
	first := f.nextProducerID
	f.nextProducerID = next
	return first, nil
}

// readProducerIDs reads the next id never reserved from path: 0 when the
// file does not exist (no block was ever reserved). A leftover temp file
// of an interrupted write is removed; it never held a reservation anyone
// was told of.
func readProducerIDs(fsys durable.FS, path string) (int64, error) {
	if err := durable.RemoveTemp(fsys, path); err != nil {
		return 0, err
	}
	data, err := durable.ReadSmallFile(fsys, path, maxProducerIDsSize)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, &ProducerIDsError{Path: path, Reason: "cannot read", Err: err}
	}
	next, err := ParseProducerIDs(data)
	if err != nil {
		var pe *ProducerIDsError
		if errors.As(err, &pe) {
			pe.Path = path
		}
		return 0, err
	}
	return next, nil
}

// EncodeProducerIDs renders producer.ids: the next id never reserved, as
// one line of JSON, {"version": 1, "next": 5000}.
func EncodeProducerIDs(next int64) []byte {
	return fmt.Appendf(nil, "{\"version\": %d, \"next\": %d}\n", ProducerIDsVersion, next)
}

// ParseProducerIDs decodes producer.ids. Anything it does not accept is a
// *ProducerIDsError (with an empty Path): a repeated, unknown or missing
// field, a null, trailing data, another version, or a next id that is not
// a JSON integer from 0 to 2^63-1.
func ParseProducerIDs(data []byte) (int64, error) {
	top, err := durable.ObjectFields(data)
	if err != nil {
		reason, cause := objectRefusal("", err)
		return 0, &ProducerIDsError{Reason: reason, Err: cause}
	}
	for _, name := range []string{"version", "next"} {
		if v, ok := top[name]; !ok || string(v) == "null" {
			return 0, &ProducerIDsError{Reason: fmt.Sprintf("missing field %q", name)}
		}
		if !durable.IsInteger(top[name]) {
			return 0, &ProducerIDsError{Reason: fmt.Sprintf("field %q: %s is not an integer", name, top[name])}
		}
	}
	if key, ok := durable.UnknownField(top, "version", "next"); ok {
		return 0, &ProducerIDsError{Reason: fmt.Sprintf("unknown field %q", key)}
	}
	var version int
	if err := json.Unmarshal(top["version"], &version); err != nil {
		return 0, &ProducerIDsError{Reason: `field "version"`, Err: err}
	}
	if version != ProducerIDsVersion {
		return 0, &ProducerIDsError{Reason: fmt.Sprintf("unsupported version %d, want %d", version, ProducerIDsVersion)}
	}
	var next int64
	if err := json.Unmarshal(top["next"], &next); err != nil {
		return 0, &ProducerIDsError{Reason: `field "next"`, Err: err}
	}
	if next < 0 {
		return 0, &ProducerIDsError{Reason: fmt.Sprintf("next id %d is negative", next)}
	}
	return next, nil
}
