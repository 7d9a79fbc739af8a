package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/segment"
)

// docs/phase-1-log.md § Segments and retention: a data directory written
// before segments (every replica one log.bin; testdata/datadir-single-file,
// made by the server of that time) opens unchanged: every record, leader
// epoch, committed offset and journal entry is there, and each replica's
// log.bin has become its first segment.
func TestUpgradeSingleFileDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "datadir-single-file"))))
	require.NoError(t, os.Remove(filepath.Join(dir, "README.txt")))

	for round := range 2 { // the second start finds the upgraded layout
		r := startServer(t, dir, 3, func(c *Config) { c.FailoverAfter = 0 })
		ctx := t.Context()
		want := map[string][]string{
			"orders/0": {"order-1", "order-2", "order-3", "order-4", "order-5", "order-6"},
			"orders/1": {"order-b1", "order-b2"},
			"audit/0":  {"hello"},
		}
		for tp, values := range want {
			name, p := tp[:len(tp)-2], int(tp[len(tp)-1]-'0')
			res, err := r.client.Fetch(ctx, name, p, 0, 100)
			require.NoError(t, err, "round %d %s", round, tp)
			var got []string
			for _, rec := range res.Records {
				got = append(got, string(rec.Value))
			}
			require.Equal(t, values, got, "round %d %s", round, tp)
			require.Equal(t, uint64(0), res.LogStart)
		}
		require.Equal(t, uint64(2), partitionOf(t, r, "orders", 0).LeaderEpoch)
		off, err := r.client.ConsumerOffset(ctx, "billing", "orders", 0)
		require.NoError(t, err)
		require.NotNil(t, off.Offset)
		require.Equal(t, uint64(3), *off.Offset)
		j, err := r.client.Journal(ctx, 0, 1000)
		require.NoError(t, err)
		require.NotEmpty(t, j.Entries)
		r.stop()

		for _, b := range []int{1, 2, 3} {
			rd := cluster.ReplicaDir(dir, b, "orders", 0)
			require.NoFileExists(t, filepath.Join(rd, "log.bin"))
			require.FileExists(t, filepath.Join(rd, segment.SegmentFileName(0)))
		}
	}
}
