package topic

import (
	"crypto/sha256"
	"errors"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// bigPartition is the routing rule computed the slow, obvious way, as an
// independent check: SHA-256 digest as a big-endian integer, modulo n.
func bigPartition(key []byte, n int) int {
	sum := sha256.Sum256(key)
	v := new(big.Int).SetBytes(sum[:])
	return int(v.Mod(v, big.NewInt(int64(n))).Int64())
}

// docs/design.md § Keyed routing: the golden values for 3, 7 and 64
// partitions are fixed forever; a change here moves every user's keys.
func TestRoutingGoldenValues(t *testing.T) {
	cases := []struct {
		name string
		key  []byte
		want [3]int
	}{
		{"user-123", []byte("user-123"), [3]int{2, 4, 24}},
		{"empty key", []byte{}, [3]int{1, 1, 21}},
		{"orders", []byte("orders"), [3]int{1, 1, 25}},
		{"bytes 00 ff", []byte{0x00, 0xff}, [3]int{2, 4, 56}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i, n := range []int{3, 7, 64} {
				require.Equal(t, c.want[i], PartitionForKey(c.key, n), "partitions=%d", n)
			}
		})
	}
}

// docs/design.md § Keyed routing: the whole digest is used, not a prefix.
// These values were computed by hand from the digests with math/big (see
// bigPartition) and pin keys whose first 8 bytes alone would route
// differently.
func TestRoutingMatchesBigIntegerRule(t *testing.T) {
	keys := [][]byte{[]byte("a"), []byte("user-1"), []byte("user-2"), []byte("payments"), {0}, []byte("αβγ")}
	for _, k := range keys {
		for _, n := range []int{1, 2, 3, 5, 7, 10, 64, 100, 1000, 1<<31 - 1, 1 << 40, 1<<55 - 1, 1 << 55, 1<<62 + 3} {
			require.Equal(t, bigPartition(k, n), PartitionForKey(k, n), "key %q partitions %d", k, n)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		k := make([]byte, r.IntN(40))
		for i := range k {
			k[i] = byte(r.UintN(256))
		}
		n := 1 + r.IntN(1<<20)
		require.Equal(t, bigPartition(k, n), PartitionForKey(k, n), "key %x partitions %d", k, n)
	}
}

// Hand-computed examples used in docs/phase-2-topics.md.
func TestRoutingWorkedExample(t *testing.T) {
	sum := sha256.Sum256([]byte("user-123"))
	v := new(big.Int).SetBytes(sum[:])
	require.Equal(t, "fcdec6df4d44dbc637c7c5b58efface52a7f8a88535423430255be0bb89bedd8", new(big.Int).Set(v).Text(16))
	require.Equal(t, int64(2), new(big.Int).Mod(v, big.NewInt(3)).Int64())
	require.Equal(t, 2, PartitionForKey([]byte("user-123"), 3))
}

// docs/design.md § Keyed routing: one partition takes every key.
func TestRoutingSinglePartition(t *testing.T) {
	for _, k := range [][]byte{nil, {}, []byte("x")} {
		require.Equal(t, 0, PartitionForKey(k, 1))
	}
}

// Decision: a partition count below 1 is a programmer error and panics;
// Open refuses such counts before routing can ever see them.
func TestRoutingPanicsOnInvalidCount(t *testing.T) {
	require.Panics(t, func() { PartitionForKey([]byte("k"), 0) })
	require.Panics(t, func() { PartitionForKey([]byte("k"), -1) })
}

// docs/phase-2-topics.md § Routing: a nil key is round robin, an empty key is
// hashed.
func TestRoutingRouteNilVersusEmpty(t *testing.T) {
	for rr := uint64(0); rr < 10; rr++ {
		require.Equal(t, int(rr%7), route(nil, 7, rr))
		require.Equal(t, 1, route([]byte{}, 7, rr))
	}
}

func TestRoutingPlanBatch(t *testing.T) {
	msgs := []Message{
		{Key: nil}, {Key: []byte("user-123")}, {Key: nil}, {Key: []byte{}}, {Key: nil},
	}
	pl := planBatch(msgs, 3, 2)
	// keyless take cursor 2, 3, 4 → partitions 2, 0, 1; user-123 → 2; empty → 1
	require.Equal(t, []int{2, 2, 0, 1, 1}, pl.Partition)
	require.Equal(t, map[int][]int{0: {2}, 1: {3, 4}, 2: {0, 1}}, pl.Messages)
}

// Decision: one Router carries the routing rule for a topic and for a
// replicated topic of the cluster: keyless records take the cursor in turn,
// keyed records never move it.
func TestRoutingRouterRoute(t *testing.T) {
	r := NewRouter(3)
	got := []int{
		r.Route(nil), r.Route([]byte("user-123")), r.Route(nil), r.Route([]byte{}), r.Route(nil), r.Route(nil),
	}
	require.Equal(t, []int{0, 2, 1, 1, 2, 0}, got)
	require.Panics(t, func() { NewRouter(0) })
}

// Decision: the keyless messages of one batch take consecutive cursor
// values, reserved in one step, so a batch of n keyless messages over n
// partitions covers every partition once even while other producers send.
func TestRoutingRouterPlanReservesConsecutiveValues(t *testing.T) {
	const partitions, rounds = 4, 200
	r := NewRouter(partitions)
	batch := make([]Message, partitions)
	plans := make(chan Plan, 2*rounds)
	done := make(chan struct{})
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range rounds {
				plans <- r.Plan(batch)
				r.Route(nil) // a single send in between moves the cursor too
			}
		}()
	}
	<-done
	<-done
	close(plans)
	for pl := range plans {
		first := pl.Partition[0]
		for i, p := range pl.Partition {
			require.Equal(t, (first+i)%partitions, p, "plan %v is not one consecutive run", pl.Partition)
		}
	}
}

// Decision: a batch write runs each partition's share once and reports
// exactly the failed partitions in one *BatchError; the others' shares
// were written.
func TestRoutingPlanWrite(t *testing.T) {
	msgs := []Message{{Key: nil}, {Key: nil}, {Key: nil}, {Key: nil}}
	pl := NewRouter(3).Plan(msgs) // partitions 0, 1, 2, 0
	boom := errors.New("disk on fire")
	var mu sync.Mutex
	written := map[int][]int{}
	err := pl.Write("orders", func(p int, idx []int) error {
		if p == 1 {
			return boom
		}
		mu.Lock()
		defer mu.Unlock()
		written[p] = idx
		return nil
	})
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "orders", be.Topic)
	require.Equal(t, map[int]error{1: boom}, be.Partitions)
	require.ErrorIs(t, err, boom)
	require.Equal(t, map[int][]int{0: {0, 3}, 2: {2}}, written)

	require.NoError(t, pl.Write("orders", func(int, []int) error { return nil }))
}

// Decision: one oversized payload refuses the whole batch, naming it.
func TestRoutingCheckPayloads(t *testing.T) {
	msgs := []Message{{Payload: []byte("abc")}, {Payload: []byte("abcd")}}
	require.NoError(t, CheckPayloads(msgs, 4))
	require.ErrorIs(t, CheckPayloads(msgs, 3), log.ErrPayloadTooLarge)
	require.Equal(t, [][]byte{[]byte("abcd"), []byte("abc")}, Payloads(msgs, []int{1, 0}))
}
