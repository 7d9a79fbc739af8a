package main

import (
	"encoding/json"
	"testing"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/stretchr/testify/require"
)

// TestCLITopicConfig pins
// docs/cli.md § `pystream topic alter-config TOPIC [KEY=VALUE ...] [--delete-config KEY ...]`
// and the --config of topic create: topic create --config sets keys, topic describe shows every key with its source, alter-config
// sets and removes keys; a bad key is the server's 400 (exit 1) and
// changes nothing, a malformed argument a usage error (exit 2).
func TestCLITopicConfig(t *testing.T) {
	url := startServer(t, 1, "PYSTREAM_SEGMENT_MS=60000")
	r := ok(t, url, "", "topic", "create", "orders", "--config", "retention.ms=3600000", "--config", "segment.bytes=1048576")
	require.Equal(t, "created topic orders (1 partition, replication factor 1)\n", r.stdout)

	r = ok(t, url, "", "topic", "describe", "orders")
	require.Contains(t, r.stdout, "  0\n"+
		"CONFIG                  VALUE       SOURCE\n"+
		"cleanup.policy          delete      default\n"+
		"max.message.bytes       1048588     default\n"+
		"message.timestamp.type  CreateTime  default\n"+
		"min.insync.replicas     1           default\n"+
		"retention.bytes         -1          default\n"+
		"retention.ms            3600000     topic\n"+
		"segment.bytes           1048576     topic\n"+
		"segment.ms              60000       default\n")

	r = ok(t, url, "", "topic", "alter-config", "orders", "retention.bytes=1073741824", "min.insync.replicas=2", "message.timestamp.type=LogAppendTime",
		"--delete-config", "segment.bytes")
	require.Equal(t, "altered the configuration of topic orders\n"+
		"CONFIG                  VALUE          SOURCE\n"+
		"cleanup.policy          delete         default\n"+
		"max.message.bytes       1048588        default\n"+
		"message.timestamp.type  LogAppendTime  topic\n"+
		"min.insync.replicas     2              topic\n"+
		"retention.bytes         1073741824     topic\n"+
		"retention.ms            3600000        topic\n"+
		"segment.bytes           134217728      default\n"+
		"segment.ms              60000          default\n", r.stdout)
	ok(t, url, "", "topic", "alter-config", "orders", "--delete-config", "min.insync.replicas", "--delete-config", "message.timestamp.type")

	r = ok(t, url, "", "topic", "alter-config", "orders", "--delete-config", "retention.ms", "--json")
	var got apiclient.TopicConfigResponse
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, []string{"retention.bytes"}, got.ConfigOverrides)

	// Refused by the server, naming the key: exit 1, nothing changed.
	for _, args := range [][]string{
		{"topic", "alter-config", "orders", "segment.bytes=12"},
		{"topic", "alter-config", "orders", "retention.ms=1", "cleanup.policy=compact"},
		{"topic", "alter-config", "orders", "min.insync.replicas=0"},
		{"topic", "alter-config", "orders", "retention.ms=1", "compression.type=zstd"},
		{"topic", "create", "other", "--config", "cleanup.policy=compact"},
		{"topic", "alter-config", "orders", "message.timestamp.type=Now"},
		{"topic", "create", "other", "--config", "segment.ms=+5"},
	} {
		r = pys(t, url, "", args...)
		require.Equal(t, 1, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "[invalid_argument]")
	}
	require.Contains(t, pys(t, url, "", "topic", "create", "other", "--config", "segment.ms=+5").stderr, `"segment.ms"`)
	require.Contains(t, pys(t, url, "", "topic", "alter-config", "orders", "cleanup.policy=compact").stderr, "log compaction does not exist in PyStream yet")
	require.Equal(t, []string{"retention.bytes"}, describe(t, url, "orders").ConfigOverrides)
	r = pys(t, url, "", "topic", "alter-config", "nope", "retention.ms=1")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "[not_found]")

	// Usage errors: nothing asked of the server.
	for _, args := range [][]string{
		{"topic", "alter-config"},
		{"topic", "alter-config", "orders"},
		{"topic", "alter-config", "orders", "retention.ms"},
		{"topic", "alter-config", "orders", "retention.ms=1", "retention.ms=2"},
		{"topic", "alter-config", "orders", "retention.ms=1", "--delete-config", "retention.ms"},
		{"topic", "create", "x", "--config", "=1"},
	} {
		r = pys(t, url, "", args...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
	}
}
