package client

import (
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
	"github.com/stretchr/testify/require"
)

func offsetsOf(recs []log.Record) []uint64 {
	out := make([]uint64, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.Offset)
	}
	return out
}

// docs/phase-3-clients.md § Consumer: position vs committed offset: fetch
// moves the position only; commit persists it; a new consumer resumes from
// the committed offset; never-committed is distinct from a committed 0.
func TestConsumerPositionVersusCommitted(t *testing.T) {
	f := newFixture(t, 2, 8)
	c := f.consumer(t, "analytics-worker")

	steps := []struct {
		name          string
		do            func(t *testing.T)
		wantPosition  uint64
		wantCommitted uint64
		wantOK        bool
	}{
		{"new consumer starts at 0, nothing committed", func(t *testing.T) {}, 0, 0, false},
		{"commit at 0 records a committed 0", func(t *testing.T) { require.NoError(t, c.Commit()) }, 0, 0, true},
		{"fetch 0-4 moves position only", func(t *testing.T) {
			recs, err := c.Fetch(5)
			require.NoError(t, err)
			require.Equal(t, []uint64{0, 1, 2, 3, 4}, offsetsOf(recs))
		}, 5, 0, true},
		{"commit persists 5", func(t *testing.T) { require.NoError(t, c.Commit()) }, 5, 5, true},
		{"fetch the rest", func(t *testing.T) {
			recs, err := c.Fetch(100)
			require.NoError(t, err)
			require.Equal(t, []uint64{5, 6, 7}, offsetsOf(recs))
		}, 8, 5, true},
		{"fetch at the end is empty and moves nothing", func(t *testing.T) {
			recs, err := c.Fetch(100)
			require.NoError(t, err)
			require.Empty(t, recs)
		}, 8, 5, true},
	}
	for _, s := range steps {
		s.do(t)
		require.Equal(t, s.wantPosition, c.Position(), s.name)
		off, ok := c.Committed()
		require.Equal(t, s.wantOK, ok, s.name)
		require.Equal(t, s.wantCommitted, off, s.name)
		stored, ok, err := f.store.Load("analytics-worker", "orders", 0)
		require.NoError(t, err)
		require.Equal(t, s.wantOK, ok, s.name)
		require.Equal(t, s.wantCommitted, stored, s.name)
	}

	// A new consumer with the same id resumes from the committed offset.
	c2 := f.consumer(t, "analytics-worker")
	require.Equal(t, uint64(5), c2.Position())
	off, ok := c2.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(5), off)

	// Another id has its own progress.
	other := f.consumer(t, "other")
	require.Equal(t, uint64(0), other.Position())
	_, ok = other.Committed()
	require.False(t, ok)
}

// docs/phase-3-clients.md § At-least-once delivery, and why commits are explicit:
// records fetched and processed but not committed are delivered again to the
// next consumer with the same id.
func TestConsumerAtLeastOnce(t *testing.T) {
	f := newFixture(t, 1, 6)
	c := f.consumer(t, "worker")
	recs, err := c.Fetch(2)
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1}, offsetsOf(recs))
	require.NoError(t, c.Commit()) // committed 2
	recs, err = c.Fetch(3)
	require.NoError(t, err)
	processed := offsetsOf(recs) // 2, 3, 4 "processed", then a crash: no commit
	require.Equal(t, []uint64{2, 3, 4}, processed)

	again := f.consumer(t, "worker")
	recs, err = again.Fetch(3)
	require.NoError(t, err)
	require.Equal(t, processed, offsetsOf(recs), "the uncommitted records are seen again")
}

// docs/phase-3-clients.md § Seek and replay: seek back replays without
// touching the committed offset; committing below the stored offset is a
// regression error and leaves the file unchanged; seek past the end yields
// empty fetches, and committing there is refused.
func TestConsumerSeekReplayAndRegression(t *testing.T) {
	f := newFixture(t, 1, 5)
	c := f.consumer(t, "replayer")
	_, err := c.Fetch(4)
	require.NoError(t, err)
	require.NoError(t, c.Commit())
	path := f.offsetRoot + "/replayer/orders/partition-000000.offset"
	before := readBytes(t, path)

	c.Seek(0)
	require.Equal(t, uint64(0), c.Position())
	off, _ := c.Committed()
	require.Equal(t, uint64(4), off, "seek never changes durable progress")
	recs, err := c.Fetch(10)
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1, 2, 3, 4}, offsetsOf(recs))

	c.Seek(1)
	err = c.Commit()
	var re *OffsetRegressionError
	require.ErrorAs(t, err, &re)
	require.Equal(t, uint64(4), re.Committed)
	require.Equal(t, uint64(1), re.Requested)
	require.Equal(t, "replayer", re.ConsumerID)
	require.Equal(t, "orders", re.Topic)
	require.Equal(t, before, readBytes(t, path), "file unchanged")
	off, _ = c.Committed()
	require.Equal(t, uint64(4), off)

	c.Seek(100)
	recs, err = c.Fetch(10)
	require.NoError(t, err)
	require.Empty(t, recs)
	require.Equal(t, uint64(100), c.Position())
	require.ErrorIs(t, c.Commit(), ErrOffsetBeyondEnd, "past the end: no record there was read")
	require.Equal(t, before, readBytes(t, path), "file unchanged")
	c.Seek(5)
	require.NoError(t, c.Commit(), "at the end is forward progress")
}

// Commit is a no-op when the position equals the committed offset: nothing
// is written (the FaultFS counts the renames of atomic writes).
func TestConsumerCommitUnchangedIsNoOp(t *testing.T) {
	f := newFixture(t, 1, 3)
	ffs := logtest.NewFaultFS(nil)
	store, err := OpenOffsetStoreWithOptions(f.offsetRoot, OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	c, err := NewConsumer(ConsumerConfig{ID: "noop", Topic: f.topic, Partition: 0, Offsets: store})
	require.NoError(t, err)
	_, err = c.Fetch(3)
	require.NoError(t, err)
	require.NoError(t, c.Commit())
	require.Equal(t, 1, ffs.Count(logtest.OpRename))
	require.NoError(t, c.Commit())
	require.Equal(t, 1, ffs.Count(logtest.OpRename), "second commit wrote nothing")
	_, err = c.Fetch(3)
	require.NoError(t, err)
	require.NoError(t, c.Commit(), "an empty fetch at the end leaves the position alone")
	require.Equal(t, 1, ffs.Count(logtest.OpRename))
}

// docs/phase-3-clients.md § Consumer: position vs committed offset: a
// consumer is bound to one existing partition; ids and configuration are
// validated and nothing is created for bad ones.
func TestConsumerConfigValidation(t *testing.T) {
	f := newFixture(t, 2, 0)
	for _, id := range []string{"", "..", ".", "a/b", "../x", "a b"} {
		_, err := NewConsumer(ConsumerConfig{ID: id, Topic: f.topic, Partition: 0, Offsets: f.store})
		require.ErrorIs(t, err, topic.ErrInvalidName, "%q", id)
	}
	for _, p := range []int{-1, 2} {
		_, err := NewConsumer(ConsumerConfig{ID: "ok", Topic: f.topic, Partition: p, Offsets: f.store})
		require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
	}
	_, err := NewConsumer(ConsumerConfig{ID: "ok", Partition: 0, Offsets: f.store})
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = NewConsumer(ConsumerConfig{ID: "ok", Topic: f.topic, Partition: 0})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.NoDirExists(t, f.offsetRoot)
}

// A consumer reads through the Source interface only, so a replicated
// partition can stand in for a topic: here a source that serves records
// below a high watermark.
func TestConsumerOverCustomSource(t *testing.T) {
	f := newFixture(t, 1, 6)
	src := &watermarked{Topic: f.topic, hw: 3}
	c, err := NewConsumer(ConsumerConfig{ID: "hw", Topic: src, Partition: 0, Offsets: f.store})
	require.NoError(t, err)
	recs, err := c.Fetch(10)
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1, 2}, offsetsOf(recs))
	// The end a commit is checked against is the source's, not the
	// topic's log end: past the watermark is refused.
	c.Seek(5)
	require.ErrorIs(t, c.Commit(), ErrOffsetBeyondEnd)
	c.Seek(3)
	src.hw = 6
	recs, err = c.Fetch(10)
	require.NoError(t, err)
	require.Equal(t, []uint64{3, 4, 5}, offsetsOf(recs))
	require.NoError(t, c.Commit())
}

type watermarked struct {
	*topic.Topic
	hw uint64
}

func (w *watermarked) Read(p int, start uint64, max int) ([]log.Record, error) {
	if start >= w.hw {
		return nil, nil
	}
	if uint64(max) > w.hw-start {
		max = int(w.hw - start)
	}
	return w.Topic.Read(p, start, max)
}

// NextOffset is the watermark, as Read serves it.
func (w *watermarked) NextOffset(int) (uint64, error) { return w.hw, nil }

var _ Source = (*watermarked)(nil)
