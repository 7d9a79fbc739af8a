package main

import (
	"encoding/json"
	"testing"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/stretchr/testify/require"
)

// TestCLITopicAddPartitions pins docs/cli.md § `pystream topic add-partitions NAME --partitions N`:
// the topic grows and says so; the same count again succeeds; fewer is the
// server's 400 (exit 1), an unknown topic its 404, both changing nothing;
// a missing or bad --partitions a usage error (exit 2).
func TestCLITopicAddPartitions(t *testing.T) {
	url := startServer(t, 2)
	ok(t, url, "", "topic", "create", "orders", "-p", "1", "-r", "2")

	r := ok(t, url, "", "topic", "add-partitions", "orders", "--partitions", "3")
	require.Equal(t, "topic orders has 3 partitions (replication factor 2)\n", r.stdout)
	require.Len(t, describe(t, url, "orders").Partitions, 3)

	r = ok(t, url, "", "topic", "add-partitions", "orders", "-p", "3", "--json")
	var td apiclient.TopicDetail
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &td))
	require.Equal(t, 3, td.PartitionCount)

	r = pys(t, url, "", "topic", "add-partitions", "orders", "-p", "2")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "[invalid_argument]")
	require.Contains(t, r.stderr, "has 3 partition(s)")
	r = pys(t, url, "", "topic", "add-partitions", "nope", "-p", "2")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "[not_found]")

	for _, args := range [][]string{
		{"topic", "add-partitions", "orders"},
		{"topic", "add-partitions", "orders", "-p", "0"},
		{"topic", "add-partitions", "-p", "4"},
	} {
		r = pys(t, url, "", args...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
	}
	require.Equal(t, 3, describe(t, url, "orders").PartitionCount, "refusals grow nothing")
}
