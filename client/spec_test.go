package client_test

// Black-box tests of the phase-3 guarantees, written from the behavioural
// rules of docs/phase-3-clients.md and docs/design.md alone. Each test names
// the rule it pins ("Spec:" states it in words); each would fail if that rule
// broke.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

func specTopic(t *testing.T, dir string, n int) *topic.Topic {
	t.Helper()
	tp, err := topic.Open(dir, "orders", n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tp.Close() })
	return tp
}

func specStore(t *testing.T, dir string) *client.OffsetStore {
	t.Helper()
	s, err := client.OpenOffsetStore(dir)
	require.NoError(t, err)
	return s
}

func specConsumer(t *testing.T, tp *topic.Topic, s *client.OffsetStore, id string) *client.Consumer {
	t.Helper()
	c, err := client.NewConsumer(client.ConsumerConfig{ID: id, Topic: tp, Partition: 0, Offsets: s})
	require.NoError(t, err)
	return c
}

func specFill(t *testing.T, tp *topic.Topic, n int) {
	t.Helper()
	for i := range n {
		_, err := tp.Append([]byte("k"), []byte(fmt.Sprintf("r%d", i)))
		require.NoError(t, err)
	}
}

// specSnapshot returns every file under root with its bytes.
func specSnapshot(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out, err := logtest.Snapshot(root)
	require.NoError(t, err)
	return out
}

func specOffsetPath(root, id, tp string, p int) string {
	return filepath.Join(root, id, tp, fmt.Sprintf("partition-%06d.offset", p))
}

// Spec: the producer sends raw bytes and adds no encoding — nothing is JSON-,
// UTF-8- or otherwise encoded; the stored payload is the sent bytes, and the
// result reports exactly where the record landed.
func TestSpecProducerAddsNoEncoding(t *testing.T) {
	tp := specTopic(t, t.TempDir(), 3)
	p := client.NewProducer(tp)
	payloads := [][]byte{{}, {0xff, 0x00, 0xc3}, []byte(`{"a":1}`), []byte("\"x\""), bytes.Repeat([]byte{7}, 3000)}
	for _, payload := range payloads {
		res, err := p.Send([]byte("key"), payload)
		require.NoError(t, err)
		require.Equal(t, "orders", res.Topic)
		recs, err := tp.Read(res.Partition, res.Offset, 1)
		require.NoError(t, err)
		require.Len(t, recs, 1)
		require.True(t, bytes.Equal(payload, recs[0].Payload), "stored bytes differ for %q", payload)
		require.Equal(t, res.Timestamp, recs[0].Timestamp)
		require.Equal(t, res.Offset, recs[0].Offset)
	}
}

// Spec: the producer's key semantics are exactly the topic's: a key routes
// by SHA-256, nil is round robin, and b"" is a real key.
func TestSpecProducerKeySemanticsAreTheTopics(t *testing.T) {
	tp := specTopic(t, t.TempDir(), 3)
	p := client.NewProducer(tp)
	for _, key := range [][]byte{[]byte("user-123"), {}, []byte("orders")} {
		res, err := p.Send(key, []byte("x"))
		require.NoError(t, err)
		require.Equal(t, topic.PartitionForKey(key, 3), res.Partition, "key %q", key)
	}
	var parts []int
	for range 4 {
		res, err := p.Send(nil, []byte("x"))
		require.NoError(t, err)
		parts = append(parts, res.Partition)
	}
	require.Equal(t, []int{0, 1, 2, 0}, parts)
}

// Spec: a producer borrows its topic and never closes it — the topic keeps
// working after the producer is used, fails a send, and is dropped.
func TestSpecProducerNeverClosesTheTopic(t *testing.T) {
	tp, err := topic.OpenWithOptions(t.TempDir(), "orders", 2, topic.Options{MaxPayloadSize: 16})
	require.NoError(t, err)
	defer tp.Close()
	func() {
		p := client.NewProducer(tp)
		_, err := p.Send(nil, []byte("fits"))
		require.NoError(t, err)
		_, err = p.Send(nil, bytes.Repeat([]byte{1}, 17))
		require.ErrorIs(t, err, log.ErrPayloadTooLarge)
		_, err = p.SendBatch([]topic.Message{{Payload: []byte("a")}, {Payload: []byte("b")}})
		require.NoError(t, err)
	}()
	_, err = tp.Append(nil, []byte("still open"))
	require.NoError(t, err)
}

// Spec: the producer is safe for concurrent use and every acknowledged send
// is a distinct record at the offset it reported.
func TestSpecProducerConcurrentSendsLandWhereReported(t *testing.T) {
	tp := specTopic(t, t.TempDir(), 2)
	p := client.NewProducer(tp)
	var mu sync.Mutex
	seen := map[[2]uint64]string{}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				payload := fmt.Sprintf("%d-%d", g, i)
				res, err := p.Send(nil, []byte(payload))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[[2]uint64{uint64(res.Partition), res.Offset}] = payload
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, 160)
	for at, payload := range seen {
		recs, err := tp.Read(int(at[0]), at[1], 1)
		require.NoError(t, err)
		require.Equal(t, payload, string(recs[0].Payload))
	}
}

// Spec: position (memory, next offset fetched) and committed offset (disk)
// are different things: fetching 0-4 moves the position to 5 and leaves the
// committed offset unset; nothing is committed automatically.
func TestSpecConsumerFetchMovesPositionOnly(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 8)
	offsets := filepath.Join(dir, "offsets")
	s := specStore(t, offsets)
	c := specConsumer(t, tp, s, "analytics-worker")
	require.Equal(t, uint64(0), c.Position())

	recs, err := c.Fetch(5)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	for i, r := range recs {
		require.Equal(t, uint64(i), r.Offset)
	}
	require.Equal(t, uint64(5), c.Position())
	_, ok := c.Committed()
	require.False(t, ok, "fetch must not commit")
	_, ok, err = s.Load("analytics-worker", "orders", 0)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoFileExists(t, specOffsetPath(offsets, "analytics-worker", "orders", 0))

	require.NoError(t, c.Commit())
	off, ok := c.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(5), off)
	require.Equal(t, uint64(5), c.Position())
}

// Spec: committed offsets persist atomically and are recovered after a
// restart: a new consumer with the same id (and a new store) starts at the
// committed offset, stored as {"version": 1, "offset": N} in
// <root>/<consumer_id>/<topic>/partition-000000.offset.
func TestSpecConsumerCommitPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 6)
	offsets := filepath.Join(dir, "offsets")
	c := specConsumer(t, tp, specStore(t, offsets), "analytics-worker")
	_, err := c.Fetch(4)
	require.NoError(t, err)
	require.NoError(t, c.Commit())

	raw, err := os.ReadFile(specOffsetPath(offsets, "analytics-worker", "orders", 0))
	require.NoError(t, err)
	require.JSONEq(t, `{"version": 1, "offset": 4}`, string(raw))

	c2 := specConsumer(t, tp, specStore(t, offsets), "analytics-worker")
	require.Equal(t, uint64(4), c2.Position())
	off, ok := c2.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(4), off)
	recs, err := c2.Fetch(10)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, "r4", string(recs[0].Payload))

	// Another consumer id has its own progress.
	other := specConsumer(t, tp, specStore(t, offsets), "billing")
	require.Equal(t, uint64(0), other.Position())
}

// Spec: committed_offset is None when the consumer never committed, which is
// distinct from a committed 0; committing 0 records a real 0.
func TestSpecConsumerNeverCommittedVersusCommittedZero(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	offsets := filepath.Join(dir, "offsets")
	s := specStore(t, offsets)

	_, ok, err := s.Load("w", "orders", 0)
	require.NoError(t, err)
	require.False(t, ok)

	c := specConsumer(t, tp, s, "w")
	_, ok = c.Committed()
	require.False(t, ok)
	require.NoError(t, c.Commit(), "committing position 0 is a real commit")
	off, ok := c.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(0), off)

	off, ok, err = specStore(t, offsets).Load("w", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok, "a committed 0 must survive a restart as committed")
	require.Equal(t, uint64(0), off)
	c2 := specConsumer(t, tp, specStore(t, offsets), "w")
	off, ok = c2.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(0), off)
}

// Spec: at-least-once — a consumer that fetches and processes records but
// stops before committing resumes at the old committed offset and sees those
// records again.
func TestSpecConsumerAtLeastOnceReplay(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 10)
	offsets := filepath.Join(dir, "offsets")

	c := specConsumer(t, tp, specStore(t, offsets), "w")
	_, err := c.Fetch(3)
	require.NoError(t, err)
	require.NoError(t, c.Commit())
	processed, err := c.Fetch(4) // processed, then the process dies: no commit
	require.NoError(t, err)
	require.Len(t, processed, 4)

	again := specConsumer(t, tp, specStore(t, offsets), "w")
	replayed, err := again.Fetch(4)
	require.NoError(t, err)
	require.Equal(t, processed, replayed, "uncommitted records are delivered again")
}

// Spec: seek moves the transient position only and never changes durable
// progress, so committed records can be replayed; the offset file is
// untouched.
func TestSpecConsumerSeekNeverChangesDurableProgress(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 6)
	offsets := filepath.Join(dir, "offsets")
	s := specStore(t, offsets)
	c := specConsumer(t, tp, s, "w")
	_, err := c.Fetch(5)
	require.NoError(t, err)
	require.NoError(t, c.Commit())
	before := specSnapshot(t, offsets)

	c.Seek(0)
	require.Equal(t, uint64(0), c.Position())
	recs, err := c.Fetch(100)
	require.NoError(t, err)
	require.Len(t, recs, 6, "seek(0) replays from the beginning")
	off, ok := c.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(5), off)
	off, ok, err = s.Load("w", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(5), off)
	require.Equal(t, before, specSnapshot(t, offsets))
}

// Spec: seeking past the end of a partition is allowed and simply yields
// empty fetches (no error, no movement).
func TestSpecConsumerSeekPastEndYieldsEmptyFetches(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 2)
	c := specConsumer(t, tp, specStore(t, filepath.Join(dir, "offsets")), "w")
	for _, at := range []uint64{2, 100, 1<<63 - 1, 1<<64 - 1} {
		c.Seek(at)
		recs, err := c.Fetch(10)
		require.NoError(t, err)
		require.Empty(t, recs)
		require.Equal(t, at, c.Position())
	}
}

// Spec: a commit past the end of the partition (after a Seek past it) is
// refused with an OffsetBeyondEndError carrying the requested offset and the
// end, and nothing is written — neither a first commit nor over an existing
// one; a commit at exactly the end is allowed, and the refused offset is
// accepted once the partition has grown that far.
func TestSpecConsumerCommitPastEndRefused(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 4)
	offsets := filepath.Join(dir, "offsets")
	s := specStore(t, offsets)
	c := specConsumer(t, tp, s, "w")

	refusedErr := func(at uint64) {
		t.Helper()
		c.Seek(at)
		err := c.Commit()
		require.ErrorIs(t, err, client.ErrOffsetBeyondEnd)
		var be *client.OffsetBeyondEndError
		require.ErrorAs(t, err, &be)
		require.Equal(t, client.OffsetBeyondEndError{Op: "commit", ConsumerID: "w", Topic: "orders", Partition: 0, Requested: at, End: 4}, *be)
	}
	refused := func(at uint64) {
		t.Helper()
		before := specSnapshot(t, offsets)
		refusedErr(at)
		require.Equal(t, before, specSnapshot(t, offsets), "nothing written")
	}
	refusedErr(1000) // the commit of 1000 on a 4-record partition
	refusedErr(5)
	require.NoDirExists(t, offsets, "a refused first commit creates nothing")
	_, ok := c.Committed()
	require.False(t, ok, "never committed")

	c.Seek(4)
	require.NoError(t, c.Commit(), "at the end: only what comes next")
	refused(5)
	off, ok, err := s.Load("w", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(4), off)

	specFill(t, tp, 1)
	c.Seek(5)
	require.NoError(t, c.Commit(), "the partition reached 5")
	off, _, err = s.Load("w", "orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(5), off)
}

// Spec: committing from a position below what is stored raises
// OffsetRegressionError (carrying both offsets) and durable progress is not
// rewound: the file's bytes stay as they were.
func TestSpecConsumerRegressionRefused(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 6)
	offsets := filepath.Join(dir, "offsets")
	s := specStore(t, offsets)
	c := specConsumer(t, tp, s, "w")
	_, err := c.Fetch(5)
	require.NoError(t, err)
	require.NoError(t, c.Commit())
	before := specSnapshot(t, offsets)

	c.Seek(2)
	err = c.Commit()
	var re *client.OffsetRegressionError
	require.ErrorAs(t, err, &re)
	require.Equal(t, uint64(5), re.Committed)
	require.Equal(t, uint64(2), re.Requested)
	require.Equal(t, before, specSnapshot(t, offsets))

	err = s.Commit("w", "orders", 0, 4)
	require.ErrorAs(t, err, &re)
	require.Equal(t, uint64(5), re.Committed)
	require.Equal(t, uint64(4), re.Requested)
	require.Equal(t, before, specSnapshot(t, offsets))

	// Moving forward (or staying) is fine.
	require.NoError(t, s.Commit("w", "orders", 0, 5))
	require.NoError(t, s.Commit("w", "orders", 0, 9))
	off, _, err := s.Load("w", "orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(9), off)
}

// Spec: a regression is judged against the DURABLE value, so a second
// consumer with the same id that committed further is not rewound by a stale
// one.
func TestSpecConsumerRegressionAgainstDiskNotMemory(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 1)
	specFill(t, tp, 6)
	s := specStore(t, filepath.Join(dir, "offsets"))
	stale := specConsumer(t, tp, s, "w")
	_, err := stale.Fetch(2)
	require.NoError(t, err)
	require.NoError(t, s.Commit("w", "orders", 0, 5))
	var re *client.OffsetRegressionError
	require.ErrorAs(t, stale.Commit(), &re)
	off, _, err := s.Load("w", "orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(5), off)
}

// specBadOffsetFiles are offset files that must be reported as corrupt.
var specBadOffsetFiles = []struct {
	name    string
	content string
}{
	{"empty", ""},
	{"bad json", `{"version": 1, "offset": `},
	{"not an object", `[1, 5]`},
	{"null", `null`},
	{"missing offset", `{"version": 1}`},
	{"missing version", `{"offset": 5}`},
	{"offset as string", `{"version": 1, "offset": "5"}`},
	{"offset null", `{"version": 1, "offset": null}`},
	{"offset fractional", `{"version": 1, "offset": 5.5}`},
	{"offset negative", `{"version": 1, "offset": -1}`},
	{"offset huge", `{"version": 1, "offset": 1e30}`},
	{"offset overflows", `{"version": 1, "offset": 18446744073709551616}`},
	{"unknown version", `{"version": 2, "offset": 5}`},
	{"version as string", `{"version": "1", "offset": 5}`},
	{"trailing data", `{"version": 1, "offset": 5}{}`},
	{"binary", "\x00\x01\x02"},
}

// Spec: malformed offset state (bad JSON, missing field, wrong type,
// negative offset, unknown version) raises OffsetCorruptionError and is never
// silently repaired or overwritten — not by Load, NewConsumer, nor Commit.
func TestSpecOffsetStoreCorruptionReportedNeverRepaired(t *testing.T) {
	for _, tc := range specBadOffsetFiles {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tp := specTopic(t, filepath.Join(dir, "data"), 1)
			specFill(t, tp, 3)
			offsets := filepath.Join(dir, "offsets")
			path := specOffsetPath(offsets, "w", "orders", 0)
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			before := specSnapshot(t, offsets)
			s := specStore(t, offsets)

			var ce *client.OffsetCorruptionError
			_, _, err := s.Load("w", "orders", 0)
			require.ErrorAs(t, err, &ce)
			require.Equal(t, path, ce.Path)

			_, err = client.NewConsumer(client.ConsumerConfig{ID: "w", Topic: tp, Partition: 0, Offsets: s})
			require.ErrorAs(t, err, &ce)

			require.ErrorAs(t, s.Commit("w", "orders", 0, 7), &ce)
			require.ErrorAs(t, s.Commit("w", "orders", 0, 0), &ce)
			require.Equal(t, before, specSnapshot(t, offsets), "never repaired or overwritten")
		})
	}
}

// docs/phase-3-clients.md § Offset files and docs/design.md § Names:
// consumer ids and topic names follow the name rules and are checked before
// any path is built: a bad one is refused and nothing is created.
func TestSpecOffsetStoreRejectsUnsafeNames(t *testing.T) {
	bad := []string{"", ".", "..", "a/b", "../x", "/abs", "a b", strings.Repeat("a", 250)}
	for _, name := range bad {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			parent := t.TempDir()
			offsets := filepath.Join(parent, "offsets")
			s := specStore(t, offsets)
			before := specSnapshot(t, parent)
			require.ErrorIs(t, s.Commit(name, "orders", 0, 1), topic.ErrInvalidName)
			require.ErrorIs(t, s.Commit("w", name, 0, 1), topic.ErrInvalidName)
			_, _, err := s.Load(name, "orders", 0)
			require.ErrorIs(t, err, topic.ErrInvalidName)
			_, _, err = s.Load("w", name, 0)
			require.ErrorIs(t, err, topic.ErrInvalidName)
			require.Equal(t, before, specSnapshot(t, parent))
		})
	}
	parent := t.TempDir()
	s := specStore(t, parent)
	before := specSnapshot(t, parent)
	require.Error(t, s.Commit("w", "orders", -1, 1))
	_, _, err := s.Load("w", "orders", -1)
	require.Error(t, err)
	require.Equal(t, before, specSnapshot(t, parent))
}

// Spec: a consumer is bound to one explicitly assigned, existing partition;
// an invalid configuration is refused without touching the store.
func TestSpecConsumerConfigValidated(t *testing.T) {
	dir := t.TempDir()
	tp := specTopic(t, filepath.Join(dir, "data"), 2)
	offsets := filepath.Join(dir, "offsets")
	s := specStore(t, offsets)
	cases := []client.ConsumerConfig{
		{ID: "w", Topic: tp, Partition: 2, Offsets: s},
		{ID: "w", Topic: tp, Partition: -1, Offsets: s},
		{ID: "../w", Topic: tp, Partition: 0, Offsets: s},
		{ID: "", Topic: tp, Partition: 0, Offsets: s},
		{ID: "w", Topic: nil, Partition: 0, Offsets: s},
		{ID: "w", Topic: tp, Partition: 0, Offsets: nil},
	}
	for i, cfg := range cases {
		c, err := client.NewConsumer(cfg)
		require.Error(t, err, "case %d", i)
		require.Nil(t, c)
	}
	require.NoDirExists(t, offsets)
}

// Spec: a commit writes a temp file, fsyncs and renames it, so it leaves
// either the old valid offset or the new one, never a partial value — at
// whichever step it fails. After a failed write the store refuses further
// commits until reopened (docs/design.md § Sticky failure).
func TestSpecOffsetStoreAtomicCommitLeavesOldOrNew(t *testing.T) {
	ops := []logtest.Op{logtest.OpOpen, logtest.OpWrite, logtest.OpSync, logtest.OpRename, logtest.OpSyncDir, logtest.OpClose, logtest.OpMkdir}
	for _, op := range ops {
		for n := 1; n <= 2; n++ {
			t.Run(fmt.Sprintf("%s#%d", op, n), func(t *testing.T) {
				offsets := t.TempDir()
				ffs := logtest.NewFaultFS(nil)
				s, err := client.OpenOffsetStoreWithOptions(offsets, client.OffsetStoreOptions{FS: ffs})
				require.NoError(t, err)
				require.NoError(t, s.Commit("w", "orders", 0, 3))

				ffs.SetFault(logtest.FailNth(op, n))
				err = s.Commit("w", "orders", 0, 8)
				ffs.SetFault(nil)

				off, ok, lerr := specStore(t, offsets).Load("w", "orders", 0)
				require.NoError(t, lerr, "never a torn value")
				require.True(t, ok)
				if err != nil {
					require.Contains(t, []uint64{3, 8}, off)
					if off == 3 {
						require.NotEqual(t, logtest.OpSyncDir, op, "a failed dir sync happens after the rename")
					}
					// Sticky failure: after a failed WRITE no later commit is
					// acknowledged by this store. (The first open is the read
					// of the old value; a failed read writes nothing.)
					if op != logtest.OpOpen || n != 1 {
						require.ErrorIs(t, s.Commit("w", "orders", 0, 9), client.ErrStoreFailed)
					}
					off2, _, lerr := specStore(t, offsets).Load("w", "orders", 0)
					require.NoError(t, lerr)
					require.Equal(t, off, off2)
				} else {
					require.Equal(t, uint64(8), off)
				}
				// A reopened store works again.
				require.NoError(t, specStore(t, offsets).Commit("w", "orders", 0, 10))
			})
		}
	}
}

// Spec: commits are durable and safe for concurrent use: many goroutines
// committing increasing offsets to one file never regress it, and the final
// value is the largest committed.
func TestSpecOffsetStoreConcurrentCommitsNeverRegress(t *testing.T) {
	offsets := t.TempDir()
	s := specStore(t, offsets)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				err := s.Commit("w", "orders", 0, uint64(i*4+g))
				var re *client.OffsetRegressionError
				if err != nil && !errors.As(err, &re) {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	off, ok, err := specStore(t, offsets).Load("w", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(99), off, "the largest commit wins")
}
