package cluster

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// openWith opens the cluster at root with brokers ids registered, as a
// server with PYSTREAM_BROKERS below the known count starts only some.
func openWith(t *testing.T, root string, ids ...int) *Cluster {
	t.Helper()
	c, err := Open(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for _, id := range ids {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	return c
}

// unackedTail builds orders/0 on brokers 1..3 (leader 1) with four
// acknowledged records, then a fifth that brokers 1 and 2 hold but broker 3
// — stopped when it was sent — does not: never acknowledged, above the
// high watermark 4. Broker 3 is left stopped.
func unackedTail(t *testing.T) (*Cluster, string) {
	t.Helper()
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 4)
	require.NoError(t, c.StopBroker(3))
	_, err := prod.Send([]byte("k"), []byte("unacked"))
	require.ErrorIs(t, err, ErrReplicationFailed)
	hw, err := c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(4), hw)
	return c, root
}

func readPayloads(t *testing.T, c *Cluster, start uint64) []string {
	t.Helper()
	recs, err := c.ReadCommitted("orders", 0, start, 100)
	require.NoError(t, err)
	out := []string{}
	for _, r := range recs {
		out = append(out, string(r.Payload))
	}
	return out
}

// docs/design.md § High watermark, "After a restart": a clean Close records
// every partition's watermark in hw.checkpoint and the next Open starts from
// it, so a restart without broker 3 (PYSTREAM_BROKERS=2 after 3) still
// serves every record that was below the watermark — and nothing above it:
// the record brokers 1 and 2 hold but broker 3 lacks stays hidden. The
// reason is pinned too: when broker 3 comes back and is the only active
// replica available, failover makes it the leader, and what was served
// survives while the hidden record is gone.
func TestHWCheckpointRestartWithBrokerMissing(t *testing.T) {
	c, root := unackedTail(t)
	require.NoError(t, c.Close())
	require.FileExists(t, filepath.Join(root, HWCheckpointFileName))

	c = openWith(t, root, 1, 2)
	_, err := os.Stat(c.HWCheckpointPath())
	require.ErrorIs(t, err, fs.ErrNotExist, "Open takes the checkpoint")
	hw, err := c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(4), hw)
	require.Equal(t, []string{"a", "b", "c", "d"}, readPayloads(t, c, 0))
	require.Empty(t, readPayloads(t, c, 4), "held by the leader and broker 2 only: never served")
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(4), st.HighWatermark)
	require.Equal(t, []int{1, 2, 3}, st.Active, "broker 3 is unavailable, still active")

	// Broker 3 returns and brokers 1 and 2 fail: failover has one
	// candidate, broker 3, whose log ends at 4. Everything served is there.
	_, err = c.StartBroker(3)
	require.NoError(t, err)
	require.NoError(t, c.StopBroker(1))
	require.NoError(t, c.StopBroker(2))
	fo, err := c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 3, fo.NewLeaderBrokerID)
	require.Equal(t, uint64(4), fo.LogEndOffset, "offset 4 is gone: serving it would have shown a record the partition forgot")
	require.Equal(t, []string{"a", "b", "c", "d"}, readPayloads(t, c, 0))
}

// docs/design.md § High watermark, "After a restart": a crash writes no
// checkpoint, and the watermark then starts at 0 until every active
// replica can be read — or, as here, the missing one leaves the active set,
// after which the watermark follows the replicas left.
func TestHWCheckpointAfterCrashWaitsForEveryActiveReplica(t *testing.T) {
	c, root := unackedTail(t)
	require.NoError(t, c.Close())
	require.NoError(t, os.Remove(filepath.Join(root, HWCheckpointFileName))) // as if the process had died

	c = openWith(t, root, 1, 2)
	hw, err := c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(0), hw)
	require.Empty(t, readPayloads(t, c, 0))

	_, err = c.Deactivate("orders", 0, 3)
	require.NoError(t, err)
	hw, err = c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(5), hw, "every active replica holds five records")
	require.Equal(t, []string{"a", "b", "c", "d", "unacked"}, readPayloads(t, c, 0))
}

// A checkpoint is taken by the Open that reads it: a second Open without a
// Close in between (a crash of the first) finds none. The Close of a
// process that never saw broker 3 records the watermark it had, so a
// second restart without broker 3 serves as much as the first.
func TestHWCheckpointTakenOnceCarriedForward(t *testing.T) {
	c, root := unackedTail(t)
	require.NoError(t, c.Close())

	c = openWith(t, root, 1, 2)
	require.NoError(t, c.Close())
	c = openWith(t, root, 1, 2)
	hw, err := c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(4), hw, "carried forward by a Close without broker 3")

	c2, err := Open(root) // c never closed: as after a crash
	require.NoError(t, err)
	defer c2.Close()
	_, err = c2.StartBroker(1)
	require.NoError(t, err)
	_, err = c2.StartBroker(2)
	require.NoError(t, err)
	hw, err = c2.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(0), hw)
}

// An entry for a topic the cluster does not have, or with another
// partition count, seeds nothing; a cluster without topics writes no
// checkpoint.
func TestHWCheckpointMismatchedEntriesIgnored(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.Close())
	_, err := os.Stat(filepath.Join(root, HWCheckpointFileName))
	require.ErrorIs(t, err, fs.ErrNotExist, "no topics, no checkpoint")

	c = openWith(t, root, 1, 2)
	require.NoError(t, c.CreateTopic("orders", 2, 2))
	require.NoError(t, c.Close())
	data, err := EncodeHWCheckpoint(map[string][]uint64{"orders": {7}, "gone": {3}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, HWCheckpointFileName), data, 0o644))

	c = openWith(t, root, 1) // broker 2 missing: only a seed could move the watermark
	for p := range 2 {
		hw, err := c.HighWatermark("orders", p)
		require.NoError(t, err)
		require.Equal(t, uint64(0), hw)
	}
}

// docs/design.md § Invariants, 3, as for cluster.meta: a damaged
// checkpoint is refused by Open with an *HWCheckpointError naming it, and
// left as it is.
func TestHWCheckpointDamagedRefused(t *testing.T) {
	c, root := newCluster(t, 1)
	require.NoError(t, c.CreateTopic("orders", 1, 1))
	require.NoError(t, c.Close())
	path := filepath.Join(root, HWCheckpointFileName)
	for _, bad := range []string{"", "{", `{"version": 2, "topics": {}}`, `{"version": 1, "topics": {"orders": [-1]}}`} {
		require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
		_, err := Open(root)
		var he *HWCheckpointError
		require.ErrorAs(t, err, &he, "%q", bad)
		require.Equal(t, path, he.Path)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, bad, string(got), "left untouched")
	}
}

// The format (docs/design.md § High watermark) is pinned byte for byte.
// Regenerate with: go test -run TestHWCheckpointGolden -update
func TestHWCheckpointGolden(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	require.NoError(t, c.CreateTopic("audit", 1, 3))
	sendN(t, NewProducer(c, "audit"), "k", 2)
	require.NoError(t, c.Close())
	got, err := os.ReadFile(filepath.Join(root, HWCheckpointFileName))
	require.NoError(t, err)
	golden := filepath.Join("testdata", HWCheckpointFileName)
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	hws, err := ParseHWCheckpoint(want)
	require.NoError(t, err)
	require.Equal(t, map[string][]uint64{"audit": {2}, "orders": {0, 0, 0}}, hws)
}

// ParseHWCheckpoint refuses everything but the format, each with an
// *HWCheckpointError.
func TestHWCheckpointParseRefuses(t *testing.T) {
	for _, bad := range []string{
		``, `[]`, `{}`, `{"version": 1}`, `{"topics": {}}`,
		`{"version": null, "topics": {}}`,
		`{"version": 1, "topics": {}, "extra": 1}`,
		`{"version": 1, "version": 1, "topics": {}}`,
		`{"version": 1, "topics": {"a": [1], "a": [2]}}`,
		`{"version": 1, "topics": {"a": []}}`,
		`{"version": 1, "topics": {"a": null}}`,
		`{"version": 1, "topics": {"a": [1.5]}}`,
		`{"version": 1, "topics": {"a": ["1"]}}`,
		`{"version": 1, "topics": {"a": [18446744073709551616]}}`,
		`{"version": 1, "topics": {"../x": [1]}}`,
		`{"version": 1, "topics": {}} garbage`,
	} {
		_, err := ParseHWCheckpoint([]byte(bad))
		var he *HWCheckpointError
		require.ErrorAs(t, err, &he, "%q", bad)
	}
	hws, err := ParseHWCheckpoint([]byte(`{"topics": {"a": [0, 18446744073709551615]}, "version": 1}`))
	require.NoError(t, err)
	require.Equal(t, map[string][]uint64{"a": {0, 1<<64 - 1}}, hws)
}

// Encoding is canonical: whatever parses re-encodes to bytes that parse to
// the same value and encode to the same bytes again.
func FuzzParseHWCheckpoint(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", HWCheckpointFileName))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add(golden)
	f.Add(append(append([]byte{}, golden...), "garbage"...))
	f.Add([]byte(`{"version": 1, "topics": {}}`))
	f.Add([]byte(`{"version": 1, "topics": {"a": [18446744073709551615]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hws, err := ParseHWCheckpoint(data)
		if err != nil {
			var he *HWCheckpointError
			if !errors.As(err, &he) {
				t.Fatalf("error %v is not an *HWCheckpointError", err)
			}
			return
		}
		enc, err := EncodeHWCheckpoint(hws)
		if err != nil {
			t.Fatalf("parsed checkpoint does not encode: %v", err)
		}
		hws2, err := ParseHWCheckpoint(enc)
		if err != nil {
			t.Fatalf("encoded checkpoint does not parse: %v\n%s", err, enc)
		}
		enc2, err := EncodeHWCheckpoint(hws2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not canonical: %v\n%s\n%s", err, enc, enc2)
		}
	})
}
