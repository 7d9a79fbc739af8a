package cluster

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// Rule (OpAllocateProducerIDs): blocks follow each other from 0, the
// result names the first id, NextProducerID survives a snapshot and a
// clone, nothing is journaled; a count out of range, or one past 2^63-1,
// is refused and changes nothing.
func TestMetaStateAllocateProducerIDs(t *testing.T) {
	s := newMetaState(t, 1)
	end := s.JournalEnd()
	for i, count := range []int64{ProducerIDBlock, 1, ProducerIDBlock} {
		res := mustApply(t, s, MetaCommand{Op: OpAllocateProducerIDs, Time: metaT0, ProducerIDs: count})
		require.NotNil(t, res.FirstProducerID, "allocation %d", i)
		require.Equal(t, []int64{0, ProducerIDBlock, ProducerIDBlock + 1}[i], *res.FirstProducerID, "allocation %d", i)
	}
	require.Equal(t, int64(2*ProducerIDBlock+1), s.NextProducerID)
	require.Equal(t, end, s.JournalEnd(), "reservations are not journaled")

	enc := encodeMeta(t, s)
	require.Contains(t, string(enc), `"next_producer_id":2001`)
	parsed, err := ParseMetaState(enc)
	require.NoError(t, err)
	require.Equal(t, s.NextProducerID, parsed.NextProducerID)
	require.Equal(t, s.NextProducerID, s.Clone().NextProducerID)

	for _, count := range []int64{0, -1, MaxProducerIDCount + 1, math.MaxInt64} {
		require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpAllocateProducerIDs, Time: metaT0, ProducerIDs: count}), ErrInvalidArgument, "count %d", count)
	}
	s.NextProducerID = math.MaxInt64 - 10
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpAllocateProducerIDs, Time: metaT0, ProducerIDs: 11}), ErrProducerIDsExhausted)
	res := mustApply(t, s, MetaCommand{Op: OpAllocateProducerIDs, Time: metaT0, ProducerIDs: 10})
	require.Equal(t, int64(math.MaxInt64-10), *res.FirstProducerID, "the last ids are handed out, up to 2^63-2")

	// The command travels as JSON: its count and the answer survive it.
	raw, err := EncodeMetaCommand(MetaCommand{Op: OpAllocateProducerIDs, Time: metaT0, ProducerIDs: ProducerIDBlock})
	require.NoError(t, err)
	c, err := ParseMetaCommand(raw)
	require.NoError(t, err)
	require.Equal(t, int64(ProducerIDBlock), c.ProducerIDs)
}

// A snapshot written before producer ids existed has no next_producer_id
// and parses with none reserved; one with a negative next id is refused,
// since reading it as anything else could hand an id out again.
func TestMetaStateProducerIDsSnapshot(t *testing.T) {
	zero := encodeMeta(t, &MetaState{})
	require.NotContains(t, string(zero), "next_producer_id", "a state with no reservation encodes as before")
	s, err := ParseMetaState(zero)
	require.NoError(t, err)
	require.Zero(t, s.NextProducerID)

	bad := strings.Replace(string(zero), `{"version":1,`, `{"version":1,"next_producer_id":-5,`, 1)
	_, err = ParseMetaState([]byte(bad))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = ParseMetaState([]byte(strings.Replace(string(zero), `{"version":1,`, `{"version":1,"next_producer_id":1.5,`, 1)))
	require.ErrorIs(t, err, ErrInvalidArgument)
}

// producer.ids is one line of JSON; ParseProducerIDs refuses everything
// EncodeProducerIDs never writes, as a *ProducerIDsError.
func TestProducerIDsFileFormat(t *testing.T) {
	require.Equal(t, "{\"version\": 1, \"next\": 5000}\n", string(EncodeProducerIDs(5000)))
	for _, next := range []int64{0, 1, ProducerIDBlock, math.MaxInt64} {
		got, err := ParseProducerIDs(EncodeProducerIDs(next))
		require.NoError(t, err)
		require.Equal(t, next, got)
	}
	for _, bad := range []string{
		"",
		"garbage",
		"[]",
		`{"version": 1}`,
		`{"next": 5}`,
		`{"version": 1, "next": null}`,
		`{"version": 2, "next": 5}`,
		`{"version": 1, "next": -1}`,
		`{"version": 1, "next": 1.5}`,
		`{"version": 1, "next": 1e3}`,
		`{"version": 1, "next": "5"}`,
		`{"version": 1, "next": 9223372036854775808}`,
		`{"version": 1, "next": 5, "next": 6}`,
		`{"version": 1, "next": 5, "extra": 1}`,
		`{"version": 1, "next": 5} {}`,
	} {
		_, err := ParseProducerIDs([]byte(bad))
		var pe *ProducerIDsError
		require.ErrorAs(t, err, &pe, "%q", bad)
	}
}

// takeIDs hands out n producer ids from each of callers goroutines at
// once and returns them all.
func takeIDs(t *testing.T, c *Cluster, callers, n int) []int64 {
	t.Helper()
	var mu sync.Mutex // guards out and errs
	var out []int64
	var errs []error
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range n {
				id, err := c.NewProducerID(context.Background())
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					out = append(out, id)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	return out
}

// requireUnique fails the test if ids holds an id twice.
func requireUnique(t *testing.T, ids []int64) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(ids))
	for i := 1; i < len(sorted); i++ {
		require.NotEqual(t, sorted[i-1], sorted[i], "producer id %d handed out twice", sorted[i])
	}
}

// Concurrent callers of one process get distinct ids, from 0, and they
// share blocks: 2,400 ids reserve three blocks, not one per caller. A
// reopened cluster skips the unused rest of the last block and hands out
// ids above every one handed out before.
func TestClusterProducerIDsUniqueAcrossCallersAndReopen(t *testing.T) {
	root := t.TempDir()
	c, err := Open(root)
	require.NoError(t, err)
	ids := takeIDs(t, c, 8, 300)
	require.Len(t, ids, 2400)
	requireUnique(t, ids)
	require.Equal(t, int64(0), slices.Min(ids))
	require.Equal(t, int64(2399), slices.Max(ids), "concurrent callers share blocks")
	data, err := os.ReadFile(filepath.Join(root, ProducerIDsFileName))
	require.NoError(t, err)
	require.Equal(t, string(EncodeProducerIDs(3*ProducerIDBlock)), string(data), "three blocks reserved")
	require.NoError(t, c.Close())
	_, err = c.NewProducerID(context.Background())
	require.ErrorIs(t, err, ErrClosed)

	c, err = Open(root)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	more := takeIDs(t, c, 2, 10)
	require.Equal(t, int64(3*ProducerIDBlock), slices.Min(more), "ids 2400 to 2999 are skipped, never reused")
	requireUnique(t, append(ids, more...))
}

// A producer.ids that cannot be trusted refuses every reservation with an
// error naming the file, and is left as it was: starting again from 0
// would hand ids out twice.
func TestClusterProducerIDsMalformedFile(t *testing.T) {
	for _, content := range []string{"garbage", `{"version": 1, "next": -3}`, `{"version": 1}`, ""} {
		root := t.TempDir()
		path := filepath.Join(root, ProducerIDsFileName)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		c, err := Open(root)
		require.NoError(t, err, "the rest of the cluster opens")
		_, err = c.NewProducerID(context.Background())
		var pe *ProducerIDsError
		require.ErrorAs(t, err, &pe, "%q", content)
		require.Equal(t, path, pe.Path)
		require.Contains(t, err.Error(), path)
		_, err = c.NewProducerID(context.Background())
		require.ErrorAs(t, err, &pe, "refused again")
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, content, string(got), "the file is never rewritten")
		require.NoError(t, c.Close())
	}
}

// A reservation whose write fails hands out nothing and leaves the next
// one to write again.
func TestClusterProducerIDsFailedWrite(t *testing.T) {
	fsys := logtest.NewFaultFS(nil)
	root := t.TempDir()
	c, err := OpenWithOptions(root, Options{FS: fsys})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	fsys.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpRename && filepath.Base(path) == ProducerIDsFileName {
			return logtest.ErrInjected
		}
		return nil
	})
	_, err = c.NewProducerID(context.Background())
	require.ErrorIs(t, err, logtest.ErrInjected)
	fsys.SetFault(nil)
	id, err := c.NewProducerID(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(0), id, "the failed reservation handed nothing out")
	data, err := os.ReadFile(filepath.Join(root, ProducerIDsFileName))
	require.NoError(t, err)
	require.Equal(t, string(EncodeProducerIDs(ProducerIDBlock)), string(data))
}

// TestCrashSimProducerIDs: a block is durable in producer.ids before its
// first id is handed out (docs/design.md § Producer id blocks). A process
// killed before any step of a life that reserves two blocks — and a power
// loss right after it — opens again to hand out an id above every id
// handed out before, by it or by the process before it.
func TestCrashSimProducerIDs(t *testing.T) {
	prepared := filepath.Join(t.TempDir(), "cluster")
	c, err := Open(prepared)
	require.NoError(t, err)
	before := takeIDs(t, c, 1, 3)
	require.NoError(t, c.Close())

	var handed []int64 // what the current life handed out
	life := func(fsys durable.FS, root string) {
		cl, err := OpenWithOptions(root, Options{FS: fsys})
		if err != nil {
			return
		}
		defer cl.Close()
		for range ProducerIDBlock + 1 {
			id, err := cl.NewProducerID(context.Background())
			if err != nil {
				return
			}
			handed = append(handed, id)
		}
	}
	steps := countSteps(t, prepared, life)
	require.Equal(t, ProducerIDBlock+1, len(handed), "a whole life reserves two blocks")
	for n := 1; n <= steps+1; n++ {
		handed = nil
		root, crash := killDuring(t, prepared, n, life)
		all := append(slices.Clone(before), handed...)
		above := slices.Max(all)

		// Power loss right after the kill: only what was synced.
		lost := filepath.Join(crashInto(t, crash), "cluster")
		cl, err := Open(lost)
		require.NoError(t, err, "dies before step %d, then power loss", n)
		id, err := cl.NewProducerID(context.Background())
		require.NoError(t, err, "dies before step %d, then power loss", n)
		require.Greater(t, id, above, "dies before step %d, then power loss: handed out %d ids", n, len(handed))
		require.NoError(t, cl.Close())

		// The killed process's page cache kept.
		cl, err = OpenWithOptions(root, Options{FS: crash})
		require.NoError(t, err, "dies before step %d", n)
		id, err = cl.NewProducerID(context.Background())
		require.NoError(t, err, "dies before step %d", n)
		require.Greater(t, id, above, "dies before step %d: handed out %d ids", n, len(handed))
		require.NoError(t, cl.Close())
	}
}

// FuzzParseProducerIDs holds producer.ids' decoder to the invariants of
// every decoder: no input panics, a refusal is a *ProducerIDsError, and
// what parses encodes to bytes that parse to the same id.
func FuzzParseProducerIDs(f *testing.F) {
	f.Add([]byte{})
	f.Add(EncodeProducerIDs(0))
	f.Add(EncodeProducerIDs(math.MaxInt64))
	f.Add(append(EncodeProducerIDs(5000), "garbage"...))
	f.Add([]byte(`{"version": 1, "next": 9223372036854775808}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		next, err := ParseProducerIDs(data)
		if err != nil {
			var pe *ProducerIDsError
			if !errors.As(err, &pe) {
				t.Fatalf("refusal %v is not a *ProducerIDsError", err)
			}
			return
		}
		again, err := ParseProducerIDs(EncodeProducerIDs(next))
		if err != nil || again != next {
			t.Fatalf("%d encodes to what parses as %d, %v", next, again, err)
		}
	})
}

// A caller waiting behind another's reservation gives up when its context
// ends.
func TestClusterProducerIDsWaitEndsWithContext(t *testing.T) {
	c, _ := newCluster(t, 0)
	c.producerIDs.lock <- struct{}{} // a reservation in progress
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.NewProducerID(ctx)
	require.ErrorIs(t, err, context.Canceled)
	<-c.producerIDs.lock
	id, err := c.NewProducerID(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(0), id)
}
