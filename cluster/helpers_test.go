package cluster

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// newCluster opens a cluster in a fresh directory with brokers 1..n
// registered. It is closed when the test ends.
func newCluster(t *testing.T, n int) (*Cluster, string) {
	t.Helper()
	root := t.TempDir()
	c, err := Open(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= n; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	return c, root
}

// reopen closes c and opens the cluster at root again with brokers 1..n.
func reopen(t *testing.T, c *Cluster, root string, n int) *Cluster {
	t.Helper()
	require.NoError(t, c.Close())
	c2, err := Open(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c2.Close() })
	for id := 1; id <= n; id++ {
		_, err := c2.StartBroker(id)
		require.NoError(t, err)
	}
	return c2
}

// snapshot returns every file under root with its bytes, except the
// journal's: a failed operation records its failure there, and the tests
// that look at the journal read it.
func snapshot(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out, err := logtest.Snapshot(root)
	require.NoError(t, err)
	for path := range out {
		if strings.HasPrefix(path, JournalDir(root)+string(filepath.Separator)) {
			delete(out, path)
		}
	}
	return out
}

// readAll reads a replica log through a throwaway log instance. The broker
// owning it should be stopped, or the file only read.
func readAll(t *testing.T, path string) []log.Record {
	t.Helper()
	var recs []log.Record
	require.NoError(t, log.ScanFile(path, func(_ int64, r log.Record) error {
		recs = append(recs, r)
		return nil
	}))
	return recs
}

// replicaPath is the first segment file of broker id's replica of
// topic/partition under root (the only one while no segment has rolled).
func replicaPath(root string, id int, topic string, partition int) string {
	return filepath.Join(ReplicaDir(root, id, topic, partition), segment.SegmentFileName(0))
}

// writeBehind appends records straight into a stopped broker's replica log,
// the way a leader that wrote but never replicated would leave it.
func writeBehind(t *testing.T, path string, recs ...log.Record) {
	t.Helper()
	l, err := log.Open(path)
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	require.NoError(t, l.AppendRecords(recs))
}

func u64(v uint64) *uint64 { return &v }

func sendN(t *testing.T, p *Producer, key string, n int) []SendResult {
	t.Helper()
	var out []SendResult
	for i := 0; i < n; i++ {
		r, err := p.Send([]byte(key), []byte{byte('a' + i%26)})
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

// keyFor returns a key that routes to partition p of n.
func keyFor(t *testing.T, p, n int) string {
	t.Helper()
	for i := 0; ; i++ {
		k := "key-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if topicPartition([]byte(k), n) == p {
			return k
		}
	}
}
