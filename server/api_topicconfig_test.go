package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
)

// patchJSON sends a raw PATCH with a JSON body and returns the response.
func patchJSON(t *testing.T, r *running, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, r.base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// docs/phase-6-network-api.md § Topic configuration: a topic is created
// with overrides, shows its effective configuration and its own keys,
// and changes them with PATCH (a string sets, null removes); the server's
// defaults come from PYSTREAM_RETENTION_MS and its siblings.
func TestE2ETopicConfig(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 2, manual, func(c *Config) { c.SegmentMs = 60000 })
	c := r.client

	detail, created, err := c.CreateTopicWithConfig(ctx, "orders", 1, 2, map[string]string{"retention.ms": "3600000", "segment.bytes": "01048576"})
	require.NoError(t, err)
	require.True(t, created)
	want := map[string]string{"retention.ms": "3600000", "retention.bytes": "-1", "segment.bytes": "1048576", "segment.ms": "60000",
		"min.insync.replicas": "1", "cleanup.policy": "delete",
		"max.message.bytes": "1048588", "message.timestamp.type": "CreateTime"}
	require.Equal(t, want, detail.Config)
	require.Equal(t, []string{"retention.ms", "segment.bytes"}, detail.ConfigOverrides)

	// The same request again is 200; other overrides for the name 409.
	_, created, err = c.CreateTopicWithConfig(ctx, "orders", 1, 2, map[string]string{"retention.ms": "3600000", "segment.bytes": "1048576"})
	require.NoError(t, err)
	require.False(t, created)
	_, _, err = c.CreateTopic(ctx, "orders", 1, 2)
	apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)

	// A topic without overrides shows the server's defaults and none of
	// its own.
	plain, _, err := c.CreateTopic(ctx, "plain", 1, 1)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"retention.ms": "604800000", "retention.bytes": "-1", "segment.bytes": "134217728", "segment.ms": "60000",
		"min.insync.replicas": "1", "cleanup.policy": "delete",
		"max.message.bytes": "1048588", "message.timestamp.type": "CreateTime"}, plain.Config)
	require.Equal(t, []string{}, plain.ConfigOverrides)

	got, err := c.Topic(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, want, got.Config)

	// PATCH: set one key, remove another with null.
	res, err := c.AlterTopicConfig(ctx, "orders", map[string]string{"retention.bytes": "1073741824"}, []string{"segment.bytes"})
	require.NoError(t, err)
	want["retention.bytes"], want["segment.bytes"] = "1073741824", "134217728"
	require.Equal(t, apiclient.TopicConfigResponse{Topic: "orders", Config: want, ConfigOverrides: []string{"retention.bytes", "retention.ms"}}, *res)
	cfg, err := c.TopicConfig(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, res, cfg)
	resp := patchJSON(t, r, "/api/topics/orders/config", `{"retention.ms":null}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	cfg, err = c.TopicConfig(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, []string{"retention.bytes"}, cfg.ConfigOverrides)
	require.Equal(t, "604800000", cfg.Config["retention.ms"])

	// Refused as a whole, naming the key: nothing changes.
	for _, bad := range []struct{ body, key, says string }{
		{`{"retention.ms":"1","segment.bytes":"12"}`, "segment.bytes", "bytes from 1024"},
		{`{"retention.ms":"1","cleanup.policy":"compact"}`, "cleanup.policy", "log compaction does not exist in PyStream yet"},
		{`{"cleanup.policy":"compact,delete"}`, "cleanup.policy", "log compaction does not exist in PyStream yet"},
		{`{"cleanup.policy":"none"}`, "cleanup.policy", "not a cleanup policy"},
		{`{"min.insync.replicas":"0"}`, "min.insync.replicas", "replicas from 1"},
		{`{"retention.ms":"1","compression.type":"zstd"}`, "compression.type", "unknown key"},
		{`{"retention.ms":3600000}`, "retention.ms", "JSON string"},
		{`{"segment.ms":" 5"}`, "segment.ms", "decimal integer"},
		{`{"message.timestamp.type":"logappendtime"}`, "message.timestamp.type", "not a timestamp type"},
		{`{"max.message.bytes":"-1"}`, "max.message.bytes", "out of range"},
	} {
		resp := patchJSON(t, r, "/api/topics/orders/config", bad.body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, bad.body)
		e := apitest.DecodeError(t, resp)
		require.Equal(t, apiclient.CodeInvalidArgument, e.Code)
		require.Contains(t, e.Message, `"`+bad.key+`"`, bad.body)
		require.Contains(t, e.Message, bad.says, bad.body)
	}
	after, err := c.TopicConfig(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, cfg, after)

	// Creation refusals name the key; nothing is created.
	_, _, err = c.CreateTopicWithConfig(ctx, "nope", 1, 1, map[string]string{"segment.bytes": "+1024"})
	e := apitest.APIErr(t, err, http.StatusBadRequest, apiclient.CodeInvalidArgument)
	require.Contains(t, e.Message, `"segment.bytes"`)
	_, _, err = c.CreateTopicWithConfig(ctx, "nope", 1, 1, map[string]string{"cleanup.policy": "compact"})
	e = apitest.APIErr(t, err, http.StatusBadRequest, apiclient.CodeInvalidArgument)
	require.Contains(t, e.Message, `"cleanup.policy"`)
	require.Contains(t, e.Message, "log compaction does not exist in PyStream yet")
	_, err = c.Topic(ctx, "nope")
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)

	_, err = c.AlterTopicConfig(ctx, "nope", map[string]string{"retention.ms": "1"}, nil)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, err = c.TopicConfig(ctx, "nope")
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)

	// The change is in the journal with the overrides before and after.
	j, err := c.Journal(ctx, 0, 1000)
	require.NoError(t, err)
	var phases []string
	var last apiclient.JournalEntry
	for _, e := range j.Entries {
		if e.Event == string(cluster.EventAlterConfig) {
			phases = append(phases, e.Phase)
			last = e
		}
	}
	require.Equal(t, []string{"intent", "done", "intent", "done"}, phases)
	require.Nil(t, last.Partition, "a configuration change is a topic's, not a partition's")
	j, err = c.Journal(ctx, *last.Intent, 1)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"retention.bytes": "1073741824", "retention.ms": "3600000"}, j.Entries[0].ConfigBefore)
	require.Equal(t, map[string]string{"retention.bytes": "1073741824"}, j.Entries[0].ConfigAfter)
}
