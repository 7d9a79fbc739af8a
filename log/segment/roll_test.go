package segment_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
)

// TestSegmentRollExactFit pins doc.go § Rolling: a batch that fills the
// active segment to exactly SegmentBytes stays in it; the next append,
// one frame over, rolls to a segment named after NextOffset.
func TestSegmentRollExactFit(t *testing.T) {
	l := openSeg(t, t.TempDir(), segment.Options{SegmentBytes: 1024})
	_, err := l.AppendBatch(payloads(4, 256-log.HeaderSize)) // 4 frames of 256 bytes
	require.NoError(t, err)
	require.Equal(t, []uint64{0}, bases(l), "exactly SegmentBytes stays")
	require.Equal(t, int64(1024), l.Size())

	_, err = l.Append(nil) // 24 bytes over
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 4}, bases(l))
	segs := l.Segments()
	require.True(t, segs[0].Sealed)
	require.False(t, segs[1].Sealed)
	require.Equal(t, int64(1024), segs[0].Size)
	require.Equal(t, uint64(4), segs[0].Next)
}

// TestSegmentRollOneByteOver: the smallest frame is 24 bytes, so a
// segment 24 bytes short of SegmentBytes takes it exactly, and one 23 bytes
// short rolls, the frame landing one byte over (doc.go § Rolling).
func TestSegmentRollOneByteOver(t *testing.T) {
	l := openSeg(t, t.TempDir(), segment.Options{SegmentBytes: 1024})
	_, err := l.Append(payloadOf(1024 - 24 - log.HeaderSize)) // 1000 bytes
	require.NoError(t, err)
	_, err = l.Append(nil) // 1024: exact
	require.NoError(t, err)
	require.Equal(t, []uint64{0}, bases(l))

	l2 := openSeg(t, t.TempDir(), segment.Options{SegmentBytes: 1024})
	_, err = l2.Append(payloadOf(1024 - 23 - log.HeaderSize)) // 1001 bytes
	require.NoError(t, err)
	_, err = l2.Append(nil) // 1025: one byte over
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1}, bases(l2))
}

// TestSegmentRollBatchStraddles: a batch that would straddle the boundary
// goes whole into the next segment; a batch larger than SegmentBytes goes
// alone into an empty segment (doc.go § Rolling).
func TestSegmentRollBatchStraddles(t *testing.T) {
	l := openSeg(t, t.TempDir(), segment.Options{SegmentBytes: 1024})
	_, err := l.Append(payloadOf(1000 - log.HeaderSize))
	require.NoError(t, err)
	recs, err := l.AppendBatch(payloads(2, 0)) // 48 bytes: 1048 > 1024
	require.NoError(t, err)
	require.Equal(t, uint64(1), recs[0].Offset)
	segs := l.Segments()
	require.Equal(t, []uint64{0, 1}, bases(l))
	require.Equal(t, uint64(3), segs[1].Next, "both records of the batch in the new segment")

	big, err := l.AppendBatch(payloads(3, 500)) // 1572 bytes > SegmentBytes
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1, 3}, bases(l), "alone in a new segment")
	_, err = l.Append(nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1, 3, 6}, bases(l), "and nothing joins it")
	got, err := l.Read(3, 3)
	require.NoError(t, err)
	require.Equal(t, big, got)
	got, err = l.Read(3, 10)
	require.NoError(t, err)
	require.Len(t, got, 4, "a read goes on into the next segment")
	require.Len(t, readAll(t, l), 7)
}

// TestSegmentRollByAge pins doc.go § Rolling: the active segment rolls
// before a write once its first record is SegmentAge old, measured with
// Options.Log.Now; an empty segment never rolls.
func TestSegmentRollByAge(t *testing.T) {
	clk := logtest.NewClock(time.Unix(0, 0))
	l := openSeg(t, t.TempDir(), segment.Options{SegmentAge: 10 * time.Second, Log: log.Options{Now: clk.Now}})
	clk.Set(time.Unix(0, 0).Add(100 * time.Second))
	_, err := l.Append([]byte("a"))
	require.NoError(t, err)
	clk.Set(time.Unix(0, 0).Add(109 * time.Second))
	_, err = l.Append([]byte("b"))
	require.NoError(t, err)
	require.Equal(t, []uint64{0}, bases(l))
	clk.Set(time.Unix(0, 0).Add(110 * time.Second))
	_, err = l.Append([]byte("c"))
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 2}, bases(l), "first record 10 s old: roll")
	clk.Set(time.Unix(0, 0).Add(1000 * time.Second))
	require.Equal(t, []uint64{0, 2}, bases(l), "no write, no roll")
	_, err = l.Append([]byte("d"))
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 2, 3}, bases(l))
	require.NoError(t, l.SetSegmentOptions(0, time.Hour))
	clk.Set(time.Unix(0, 0).Add(1000*time.Second + 59*time.Minute))
	_, err = l.Append([]byte("e"))
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 2, 3}, bases(l), "SetSegmentOptions applies")
	require.ErrorIs(t, l.SetSegmentOptions(10, 0), log.ErrInvalidArgument)
	require.ErrorIs(t, l.SetSegmentOptions(0, -1), log.ErrInvalidArgument)
}

// TestSegmentRollConcurrentAppenders: many appenders across many rolls get
// dense offsets, every record reads back as appended, and group commit
// still batches (run with -race).
func TestSegmentRollConcurrentAppenders(t *testing.T) {
	const writers, perWriter = 16, 60
	dir := t.TempDir()
	l := openSeg(t, dir, segment.Options{SegmentBytes: 2048, IndexInterval: 64})
	var mu sync.Mutex
	acked := map[uint64]string{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				p := fmt.Sprintf("w%d-%d", w, i)
				var err error
				if i%5 == 0 {
					var recs []log.Record
					recs, err = l.AppendBatch([][]byte{[]byte(p), []byte(p + "b")})
					if err == nil {
						mu.Lock()
						acked[recs[0].Offset], acked[recs[1].Offset] = p, p+"b"
						mu.Unlock()
					}
				} else {
					var rec log.Record
					rec, err = l.Append([]byte(p))
					if err == nil {
						mu.Lock()
						acked[rec.Offset] = p
						mu.Unlock()
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				if i%7 == 0 {
					if _, err := l.Read(uint64(i), 3); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	check := func(l *segment.Log) {
		recs := readAll(t, l)
		require.Len(t, recs, len(acked))
		for _, r := range recs {
			require.Equal(t, acked[r.Offset], string(r.Payload))
		}
		segs := l.Segments()
		require.Greater(t, len(segs), 10, "many rolls")
		for i := 1; i < len(segs); i++ {
			require.Equal(t, segs[i-1].Next, segs[i].Base, "contiguous")
			require.LessOrEqual(t, segs[i-1].Size, int64(2048))
		}
	}
	check(l)
	require.NoError(t, l.Close())
	l2 := openSeg(t, dir, segment.Options{SegmentBytes: 2048, IndexInterval: 64})
	require.Empty(t, l2.Rebuilt())
	check(l2)
}
