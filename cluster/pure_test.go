package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

func topicPartition(key []byte, n int) int { return topic.PartitionForKey(key, n) }

// docs/phase-4-replication.md § Placement: 3 brokers, 3 partitions, rf 2
// gives leader 1/follower 2, leader 2/follower 3, leader 3/follower 1.
// docs/design.md § Placement fixes the general rule.
func TestPlacementTable(t *testing.T) {
	cases := []struct {
		name       string
		brokers    []int
		partitions int
		rf         int
		want       []Assignment
		wantErr    error
	}{
		{"spec 3x3 rf2", []int{1, 2, 3}, 3, 2, []Assignment{{1, []int{2}}, {2, []int{3}}, {3, []int{1}}}, nil},
		{"rf3 followers ascending", []int{1, 2, 3}, 3, 3, []Assignment{{1, []int{2, 3}}, {2, []int{1, 3}}, {3, []int{1, 2}}}, nil},
		{"rf1 no followers", []int{1, 2, 3}, 4, 1, []Assignment{{1, []int{}}, {2, []int{}}, {3, []int{}}, {1, []int{}}}, nil},
		{"unsorted ids are sorted first", []int{30, 10, 20}, 2, 2, []Assignment{{10, []int{20}}, {20, []int{30}}}, nil},
		{"rf above brokers", []int{1, 2}, 1, 3, nil, ErrInvalidReplicationFactor},
		{"rf zero", []int{1, 2}, 1, 0, nil, ErrInvalidReplicationFactor},
		{"no partitions", []int{1}, 0, 1, nil, ErrInvalidPartitionCount},
		{"non-positive id", []int{0, 1}, 1, 1, nil, ErrInvalidBrokerID},
		{"duplicate id", []int{1, 1}, 1, 1, nil, ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Placement(tc.brokers, tc.partitions, tc.rf)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// docs/phase-4-replication.md § Catch-up: equal offsets are no proof of equal
// data; every shared record is compared on offset, timestamp and payload.
func TestCompareRecordsTable(t *testing.T) {
	r := func(off uint64, ts int64, p string) log.Record {
		return log.Record{Offset: off, Timestamp: ts, Payload: []byte(p)}
	}
	base := []log.Record{r(0, 10, "a"), r(1, 11, "b"), r(2, 12, "c")}
	cases := []struct {
		name    string
		a, b    []log.Record
		index   int
		differs bool
	}{
		{"both empty", nil, nil, 0, false},
		{"equal", base, base, 3, false},
		{"prefix", base[:1], base, 1, false},
		{"longer first", base, base[:2], 2, false},
		{"payload differs", base, []log.Record{r(0, 10, "a"), r(1, 11, "X")}, 1, true},
		{"timestamp differs", base, []log.Record{r(0, 10, "a"), r(1, 99, "b")}, 1, true},
		{"offset differs", base, []log.Record{r(5, 10, "a")}, 0, true},
		{"nil vs empty payload equal", []log.Record{{Payload: nil}}, []log.Record{{Payload: []byte{}}}, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := CompareRecords(tc.a, tc.b)
			require.Equal(t, tc.index, m.Index)
			require.Equal(t, tc.differs, m.Differs)
			if tc.differs {
				require.NotEmpty(t, m.Reason)
			}
		})
	}
}

// docs/design.md § Failover: among the active followers on available brokers,
// the one whose log ends furthest wins, and a tie goes to the lowest broker
// id.
func TestFailoverChooseLeaderTable(t *testing.T) {
	c := func(id int, end uint64, active, avail bool) Candidate {
		return Candidate{BrokerID: id, LogEnd: end, Active: active, Available: avail}
	}
	cases := []struct {
		name  string
		cands []Candidate
		want  int
		ok    bool
	}{
		{"largest log end", []Candidate{c(2, 5, true, true), c(3, 7, true, true)}, 3, true},
		{"tie to lowest id", []Candidate{c(3, 7, true, true), c(2, 7, true, true)}, 2, true},
		{"lagging but consistent loses", []Candidate{c(2, 3, true, true), c(4, 9, true, true), c(3, 9, true, true)}, 3, true},
		{"unavailable skipped though longest", []Candidate{c(2, 100, true, false), c(3, 1, true, true)}, 3, true},
		{"inactive skipped though longest", []Candidate{c(2, 100, false, true), c(3, 1, true, true)}, 3, true},
		{"empty logs still eligible", []Candidate{c(5, 0, true, true)}, 5, true},
		{"none eligible", []Candidate{c(2, 5, false, true), c(3, 5, true, false)}, 0, false},
		{"no candidates", nil, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := ChooseLeader(tc.cands)
			require.Equal(t, tc.ok, ok)
			if ok {
				require.Equal(t, tc.want, w.BrokerID)
			}
		})
	}
}

// A partition count beyond what six-digit partition directories can name is
// refused before anything is sized from it, so a typo such as 1<<40 cannot
// exhaust memory.
func TestPlacementRejectsHugePartitionCount(t *testing.T) {
	_, err := Placement([]int{1, 2, 3}, 1<<40, 2)
	require.ErrorIs(t, err, ErrInvalidPartitionCount)
	_, err = Placement([]int{1, 2, 3}, topic.MaxPartitionCount+1, 2)
	require.ErrorIs(t, err, ErrInvalidPartitionCount)
}
