package kafka

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
)

// epochEndOffset reads the runs as Kafka's cache: several runs of one
// epoch (a log reopened) are one epoch from its first run, unknown runs
// count for none, and a current epoch without records ends at the log
// end.
func TestEpochEndOffsetRuns(t *testing.T) {
	h := cluster.LeaderEpochs{LeaderEpoch: 9, LogStart: 0, LogEnd: 40, Runs: []cluster.EpochRun{
		{Start: 0},                   // unknown: before histories were kept
		{Epoch: 2, ID: 1, Start: 5},  // epoch 2
		{Epoch: 2, ID: 2, Start: 10}, // epoch 2 again, reopened
		{Epoch: 5, ID: 3, Start: 20},
	}}
	for asked, want := range map[int32][2]int64{
		0:  {0, 5},   // older than every epoch: the first one's start
		2:  {2, 20},  // one epoch over two runs
		3:  {2, 20},  // never led: the largest epoch below it
		5:  {5, 40},  // its successor starts at the log end
		7:  {5, 40},  // between 5 and the current 9
		9:  {9, 40},  // current, no records yet
		10: {-1, -1}, // newer than any
		-1: {-1, -1},
	} {
		e, end := epochEndOffset(h, asked)
		require.Equal(t, want, [2]int64{int64(e), end}, "asked %d", asked)
	}
	// Truncated from the start as Kafka's cache is: 15 lies in epoch 2.
	h.LogStart = 15
	e, end := epochEndOffset(h, 1)
	require.Equal(t, [2]int64{1, 15}, [2]int64{int64(e), end})
	e, end = epochEndOffset(h, 2)
	require.Equal(t, [2]int64{2, 20}, [2]int64{int64(e), end})
	// No history at all: only the current epoch, at the log end.
	e, end = epochEndOffset(cluster.LeaderEpochs{LeaderEpoch: 3, LogEnd: 7}, 3)
	require.Equal(t, [2]int64{3, 7}, [2]int64{int64(e), end})
	e, end = epochEndOffset(cluster.LeaderEpochs{LeaderEpoch: 3, LogEnd: 7}, 1)
	require.Equal(t, [2]int64{1, 7}, [2]int64{int64(e), end})
}
