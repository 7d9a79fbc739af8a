package topic

import (
	"crypto/sha256"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"

	"github.com/pystream/pystream/log"
)

// PartitionForKey maps a key to a partition: the whole 32-byte SHA-256
// digest of the key, read as one big-endian unsigned integer, modulo the
// partition count. It depends on the key's bytes alone, so a key lands on
// the same partition in every process and after every restart. An empty
// key is a key like any other.
//
// partitionCount must be at least 1. A smaller count is a programmer error
// and panics, as rand.Intn does for n <= 0: every count a Topic uses has
// been validated by Open, so no user input reaches this function unchecked.
func PartitionForKey(key []byte, partitionCount int) int {
	if partitionCount < 1 {
		panic("topic: PartitionForKey with partitionCount < 1")
	}
	sum := sha256.Sum256(key)
	return digestMod(sum, partitionCount)
}

// maxFastModulus bounds the moduli digestMod reduces with machine integers:
// r < m and r*256 + 255 must fit in a uint64.
const maxFastModulus = 1 << 55

// digestMod returns the 256-bit big-endian number sum modulo m (m >= 1).
// For every realistic partition count it folds the digest in one byte at a
// time (Horner's rule: r = (r*256 + b) mod m), which needs no allocation and
// gives exactly the value of the big-integer division it replaces.
func digestMod(sum [sha256.Size]byte, m int) int {
	if uint64(m) >= maxFastModulus {
		var n, d big.Int
		n.SetBytes(sum[:])
		d.SetUint64(uint64(m))
		return int(n.Mod(&n, &d).Uint64())
	}
	mod := uint64(m)
	var r uint64
	for _, b := range sum {
		r = (r<<8 | uint64(b)) % mod
	}
	return int(r)
}

// route decides the partition of one record. A nil key takes the partition
// the round-robin cursor value rr names; any other key, the empty one
// included, is hashed.
func route(key []byte, partitionCount int, rr uint64) int {
	if key == nil {
		return int(rr % uint64(partitionCount))
	}
	return PartitionForKey(key, partitionCount)
}

// Router decides the partition of every record sent to one topic, by the
// one rule every producer of PyStream follows: a non-nil key (the empty key
// included) goes to PartitionForKey, a nil key takes the next partition of a
// round-robin cursor. The cursor lives in memory only and starts at
// partition 0, so it begins again after a restart; keyed records never move
// it. A Topic and a replicated topic of the cluster each own one Router,
// shared by all their producers.
//
// A Router is safe for concurrent use.
type Router struct {
	partitionCount int
	// cursor counts the keyless records routed so far.
	cursor atomic.Uint64
}

// NewRouter returns a Router over partitionCount partitions, its cursor at
// partition 0. partitionCount must be at least 1 (see PartitionForKey).
func NewRouter(partitionCount int) *Router {
	if partitionCount < 1 {
		panic("topic: NewRouter with partitionCount < 1")
	}
	return &Router{partitionCount: partitionCount}
}

// Route returns the partition of one record with this key, moving the
// cursor when the key is nil.
func (r *Router) Route(key []byte) int {
	var rr uint64
	if key == nil {
		rr = r.cursor.Add(1) - 1
	}
	return route(key, r.partitionCount, rr)
}

// Plan routes every message of a batch as Route would, in input order. The
// batch's keyless messages take consecutive cursor values, reserved in one
// step, so a concurrent send cannot interleave with them.
func (r *Router) Plan(msgs []Message) Plan {
	keyless := uint64(0)
	for _, m := range msgs {
		if m.Key == nil {
			keyless++
		}
	}
	rr := r.cursor.Add(keyless) - keyless
	return planBatch(msgs, r.partitionCount, rr)
}

// Plan is the routing of a batch.
type Plan struct {
	// Partition is the partition of every message, in input order.
	Partition []int
	// Messages maps every partition the batch touches to the indexes of
	// its messages, in input order.
	Messages map[int][]int
}

// Payloads returns the payloads of the messages at the indexes idx, in
// that order: one partition's share of a batch (Plan.Messages).
func Payloads(msgs []Message, idx []int) [][]byte {
	payloads := make([][]byte, len(idx))
	for j, i := range idx {
		payloads[j] = msgs[i].Payload
	}
	return payloads
}

// Write calls write once for every partition the plan touches, with the
// indexes of its messages, the partitions concurrently, and waits for all.
// The partitions whose write failed come back as a *BatchError for the
// topic topicName; nil means every write succeeded. write may fill in the
// results of its own indexes without a lock: no two calls share one.
func (pl Plan) Write(topicName string, write func(partition int, idx []int) error) error {
	var (
		wg sync.WaitGroup
		// mu guards failed.
		mu     sync.Mutex
		failed map[int]error
	)
	for p, idx := range pl.Messages {
		wg.Go(func() {
			if err := write(p, idx); err != nil {
				mu.Lock()
				defer mu.Unlock()
				if failed == nil {
					failed = map[int]error{}
				}
				failed[p] = err
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return &BatchError{Topic: topicName, Partitions: failed}
	}
	return nil
}

// CheckPayloads refuses a batch in which some payload is larger than
// limit, naming the first such message, with an error wrapping
// log.ErrPayloadTooLarge. A batch write checks it before anything is routed
// or written, so an oversized record fails its whole batch.
func CheckPayloads(msgs []Message, limit int) error {
	for i, m := range msgs {
		if len(m.Payload) > limit {
			return fmt.Errorf("message %d: %d bytes, maximum %d: %w", i, len(m.Payload), limit, log.ErrPayloadTooLarge)
		}
	}
	return nil
}

// planBatch routes every message of a batch. Keyless messages take the
// round-robin cursor values rr, rr+1, ... in input order.
func planBatch(msgs []Message, partitionCount int, rr uint64) Plan {
	pl := Plan{Partition: make([]int, len(msgs)), Messages: map[int][]int{}}
	for i, m := range msgs {
		p := route(m.Key, partitionCount, rr)
		if m.Key == nil {
			rr++
		}
		pl.Partition[i] = p
		pl.Messages[p] = append(pl.Messages[p], i)
	}
	return pl
}
