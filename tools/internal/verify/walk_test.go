package verify_test

import (
	"path/filepath"
	"testing"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/tools/internal/verify"
	"github.com/pystream/pystream/topic"
	"github.com/stretchr/testify/require"
)

// The verifier's own checks are the ones that span files; what a single
// metadata file may hold is the owning module's parser's business
// (parity_test.go).
func TestVerifyCrossFileChecks(t *testing.T) {
	const meta = `{"version": 1, "name": "orders", "partition_count": 2}`
	root := t.TempDir()
	// A sound topic.meta in a directory of another name.
	write(t, filepath.Join(root, "payments", topic.MetadataFile), []byte(meta))
	// A sound topic.meta whose partition 1 has no log and whose
	// partition 2 lies beyond partition_count.
	orders := filepath.Join(root, "orders")
	write(t, filepath.Join(orders, topic.MetadataFile), []byte(meta))
	write(t, topic.PartitionLogPath(orders, 0), nil)
	write(t, topic.PartitionLogPath(orders, 2), nil)
	// A sound offset file under a name the client never writes.
	write(t, filepath.Join(root, "offsets", "w", "orders", "partition-7"+client.OffsetFileSuffix), []byte(`{"version": 1, "offset": 3}`))

	report, err := verify.Verify(root)
	require.NoError(t, err)
	got := map[string]verify.Status{}
	for _, it := range report.Items {
		rel, err := filepath.Rel(root, it.Path)
		require.NoError(t, err)
		got[string(it.Kind)+" "+filepath.ToSlash(rel)] = it.Status
	}
	require.Equal(t, map[string]verify.Status{
		"topic.meta payments/topic.meta":             verify.StatusDamaged,
		"topic.meta orders/topic.meta":               verify.StatusOK,
		"log orders/partition-000000/log.bin":        verify.StatusOK,
		"log orders/partition-000001/log.bin":        verify.StatusMissing,
		"log orders/partition-000002/log.bin":        verify.StatusOK,
		"topic.meta orders/partition-000002":         verify.StatusDamaged,
		"offset offsets/w/orders/partition-7.offset": verify.StatusDamaged,
	}, got)
}
