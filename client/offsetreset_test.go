package client

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
)

// truncated is a Source whose log start the test raises, failing reads
// below it as a replicated topic does (*OffsetOutOfRangeError) or as a
// topic does (an error wrapping segment.ErrBeforeLogStart).
type truncated struct {
	*topic.Topic
	start uint64
	typed bool
	// raiseOnRead, when set, raises start to it on the next read: retention
	// running between a reset and the read after it.
	raiseOnRead uint64
}

func (s *truncated) LogStart(int) (uint64, error) { return s.start, nil }

func (s *truncated) Read(p int, from uint64, max int) ([]log.Record, error) {
	if s.raiseOnRead > 0 {
		s.start, s.raiseOnRead = s.raiseOnRead, 0
	}
	if from < s.start {
		if s.typed {
			end, _ := s.NextOffset(p)
			return nil, &OffsetOutOfRangeError{Topic: s.Name(), Partition: p, Offset: from, LogStart: s.start, HighWatermark: end}
		}
		return nil, fmt.Errorf("topic: read: %w", segment.ErrBeforeLogStart)
	}
	return s.Topic.Read(p, from, max)
}

var _ Source = (*truncated)(nil)

// Kafka's auto.offset.reset: below the log start, earliest resumes at the
// log start, latest at the end, and none hands the typed error back; every
// reset is reported. Both kinds of Source errors are recognized.
func TestConsumerOffsetResetPolicies(t *testing.T) {
	cases := []struct {
		policy  OffsetReset
		wantPos uint64
		wantRec []uint64
	}{
		{"", 4, []uint64{4, 5}},
		{OffsetResetEarliest, 4, []uint64{4, 5}},
		{OffsetResetLatest, 8, nil},
		{OffsetResetNone, 1, nil},
	}
	for _, typed := range []bool{true, false} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/typed=%v", tc.policy, typed), func(t *testing.T) {
				f := newFixture(t, 1, 8)
				src := &truncated{Topic: f.topic, start: 4, typed: typed}
				var seen []OffsetResetEvent
				c, err := NewConsumer(ConsumerConfig{ID: "w", Topic: src, Offsets: f.store, OffsetReset: tc.policy,
					OnReset: func(ev OffsetResetEvent) { seen = append(seen, ev) }})
				require.NoError(t, err)
				c.Seek(1)
				recs, err := c.Fetch(2)
				if tc.policy == OffsetResetNone {
					var oor *OffsetOutOfRangeError
					require.ErrorAs(t, err, &oor)
					require.ErrorIs(t, err, ErrOffsetOutOfRange)
					require.Equal(t, OffsetOutOfRangeError{Topic: "orders", Offset: 1, LogStart: 4, HighWatermark: 8}, *oor)
					require.Empty(t, seen)
					_, ok := c.LastReset()
					require.False(t, ok)
				} else {
					require.NoError(t, err)
					require.Len(t, seen, 1)
					policy := tc.policy
					if policy == "" {
						policy = OffsetResetEarliest
					}
					want := OffsetResetEvent{Topic: "orders", Policy: policy, From: 1, To: tc.wantPos, LogStart: 4}
					require.Equal(t, want, seen[0])
					last, ok := c.LastReset()
					require.True(t, ok)
					require.Equal(t, want, last)
				}
				require.Equal(t, tc.wantRec, nilIfEmpty(offsetsOf(recs)))
				if tc.wantRec != nil {
					require.Equal(t, tc.wantPos+uint64(len(tc.wantRec)), c.Position())
				} else {
					require.Equal(t, tc.wantPos, c.Position())
				}
				// A reset moves the position only; nothing is committed.
				_, ok := c.Committed()
				require.False(t, ok)
			})
		}
	}
}

func nilIfEmpty(s []uint64) []uint64 {
	if len(s) == 0 {
		return nil
	}
	return s
}

// A committed offset that retention has passed is found at the first
// fetch of a new consumer, which resets from it.
func TestConsumerOffsetResetFromCommitted(t *testing.T) {
	f := newFixture(t, 1, 6)
	require.NoError(t, f.store.Commit("w", "orders", 0, 2))
	src := &truncated{Topic: f.topic, start: 5, typed: true}
	c, err := NewConsumer(ConsumerConfig{ID: "w", Topic: src, Offsets: f.store})
	require.NoError(t, err)
	require.Equal(t, uint64(2), c.Position())
	recs, err := c.Fetch(10)
	require.NoError(t, err)
	require.Equal(t, []uint64{5}, offsetsOf(recs))
	ev, ok := c.LastReset()
	require.True(t, ok)
	require.Equal(t, uint64(3), ev.LogStart-ev.From, "records deleted unread")
	require.NoError(t, c.Commit())
}

// Retention that raises the log start again between a reset and the read
// after it is met by another reset.
func TestConsumerOffsetResetRaisedAgain(t *testing.T) {
	f := newFixture(t, 1, 8)
	src := &truncated{Topic: f.topic, start: 2, typed: true}
	n := 0
	c, err := NewConsumer(ConsumerConfig{ID: "w", Topic: src, Offsets: f.store, OnReset: func(OffsetResetEvent) {
		n++
		if n == 1 {
			src.raiseOnRead = 6
		}
	}})
	require.NoError(t, err)
	recs, err := c.Fetch(10)
	require.NoError(t, err)
	require.Equal(t, []uint64{6, 7}, offsetsOf(recs))
	require.Equal(t, 2, n)
}

func TestConsumerOffsetResetInvalid(t *testing.T) {
	f := newFixture(t, 1, 0)
	_, err := NewConsumer(ConsumerConfig{ID: "w", Topic: f.topic, Offsets: f.store, OffsetReset: "smallest"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	for _, s := range []string{"earliest", "latest", "none"} {
		r, err := ParseOffsetReset(s)
		require.NoError(t, err)
		require.Equal(t, OffsetReset(s), r)
	}
	_, err = ParseOffsetReset("")
	require.ErrorIs(t, err, ErrInvalidConfig)
}
