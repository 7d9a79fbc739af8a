package cluster

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// docs/design.md § cluster.meta fixes the file's shape; the golden file pins it
// byte for byte. Regenerate with: go test -run TestMetadataGolden -update
func TestMetadataGolden(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	got, err := os.ReadFile(filepath.Join(root, MetaFileName))
	require.NoError(t, err)
	golden := filepath.Join("testdata", "cluster.meta")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))

	m, err := ParseClusterMeta(want)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, m.Brokers)
	require.Equal(t, PartitionMetadata{Partition: 2, Leader: 3, Replicas: []int{3, 1}, Active: []int{1, 3}}, m.Topics["orders"].Partitions[2])
}

// docs/design.md § cluster.meta and docs/design.md § Invariants, 3:
// cluster.meta is JSON, fully validated on load; malformed metadata is a
// *MetadataError and is never silently rewritten.
func TestMetadataMalformedTable(t *testing.T) {
	const p0 = `{"partition": 0, "leader": 1, "followers": [2], "active": [1, 2]}`
	topicWith := func(parts string) string {
		return `{"version": 1, "brokers": [1, 2], "topics": {"orders": {"partition_count": 1, "replication_factor": 2, "partitions": [` + parts + `]}}}`
	}
	// Version 2 names the replicas in placement order and the leader
	// epoch; its entries are checked as strictly.
	v2With := func(parts string) string {
		return `{"version": 2, "brokers": [1, 2, 3], "topics": {"orders": {"partition_count": 1, "replication_factor": 2, "partitions": [` + parts + `]}}}`
	}
	withConfig := func(config string) string {
		return `{"version": 2, "brokers": [1], "topics": {"t": {"partition_count": 1, "replication_factor": 1, "config": ` + config +
			`, "partitions": [{"partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1], "active": [1]}]}}}`
	}
	cases := map[string]string{
		"empty file":              ``,
		"not json":                `hello`,
		"truncated":               `{"version": 1, "brokers": [1`,
		"trailing data":           `{"version": 1, "brokers": [], "topics": {}} {}`,
		"array":                   `[]`,
		"missing version":         `{"brokers": [], "topics": {}}`,
		"version 3":               `{"version": 3, "brokers": [], "topics": {}}`,
		"version 0":               `{"version": 0, "brokers": [], "topics": {}}`,
		"version string":          `{"version": "1", "brokers": [], "topics": {}}`,
		"missing brokers":         `{"version": 1, "topics": {}}`,
		"null brokers":            `{"version": 1, "brokers": null, "topics": {}}`,
		"missing topics":          `{"version": 1, "brokers": []}`,
		"unknown field":           `{"version": 1, "brokers": [], "topics": {}, "extra": 1}`,
		"broker zero":             `{"version": 1, "brokers": [0], "topics": {}}`,
		"broker negative":         `{"version": 1, "brokers": [-1], "topics": {}}`,
		"broker duplicate":        `{"version": 1, "brokers": [1, 1], "topics": {}}`,
		"brokers unsorted":        `{"version": 1, "brokers": [2, 1], "topics": {}}`,
		"broker float":            `{"version": 1, "brokers": [1.5], "topics": {}}`,
		"bad topic name":          `{"version": 1, "brokers": [1], "topics": {"../x": {"partition_count": 1, "replication_factor": 1, "partitions": [{"partition": 0, "leader": 1, "followers": [], "active": [1]}]}}}`,
		"null topic":              `{"version": 1, "brokers": [1], "topics": {"t": null}}`,
		"missing partition_count": `{"version": 1, "brokers": [1], "topics": {"t": {"replication_factor": 1, "partitions": []}}}`,
		"zero partitions":         `{"version": 1, "brokers": [1], "topics": {"t": {"partition_count": 0, "replication_factor": 1, "partitions": []}}}`,
		"rf above brokers":        `{"version": 1, "brokers": [1, 2], "topics": {"orders": {"partition_count": 1, "replication_factor": 3, "partitions": [` + p0 + `]}}}`,
		"rf zero":                 `{"version": 1, "brokers": [1, 2], "topics": {"orders": {"partition_count": 1, "replication_factor": 0, "partitions": [` + p0 + `]}}}`,
		"too few entries":         `{"version": 1, "brokers": [1, 2], "topics": {"orders": {"partition_count": 2, "replication_factor": 2, "partitions": [` + p0 + `]}}}`,
		"missing partitions":      `{"version": 1, "brokers": [1, 2], "topics": {"orders": {"partition_count": 1, "replication_factor": 2}}}`,
		"null entry":              topicWith(`null`),
		"wrong index":             topicWith(`{"partition": 1, "leader": 1, "followers": [2], "active": [1, 2]}`),
		"missing leader":          topicWith(`{"partition": 0, "followers": [2], "active": [1, 2]}`),
		"missing followers":       topicWith(`{"partition": 0, "leader": 1, "active": [1, 2]}`),
		"missing active":          topicWith(`{"partition": 0, "leader": 1, "followers": [2]}`),
		"entry unknown field":     topicWith(`{"partition": 0, "leader": 1, "followers": [2], "active": [1, 2], "isr": [1]}`),
		"unknown leader":          topicWith(`{"partition": 0, "leader": 9, "followers": [2], "active": [9, 2]}`),
		"unknown follower":        topicWith(`{"partition": 0, "leader": 1, "followers": [9], "active": [1]}`),
		"leader also follower":    topicWith(`{"partition": 0, "leader": 1, "followers": [1], "active": [1]}`),
		"follower count vs rf":    topicWith(`{"partition": 0, "leader": 1, "followers": [], "active": [1]}`),
		"leader not active":       topicWith(`{"partition": 0, "leader": 1, "followers": [2], "active": [2]}`),
		"active not assigned":     `{"version": 1, "brokers": [1, 2, 3], "topics": {"orders": {"partition_count": 1, "replication_factor": 2, "partitions": [{"partition": 0, "leader": 1, "followers": [2], "active": [1, 3]}]}}}`,
		"active unsorted":         topicWith(`{"partition": 0, "leader": 1, "followers": [2], "active": [2, 1]}`),
		"active duplicate":        topicWith(`{"partition": 0, "leader": 1, "followers": [2], "active": [1, 1]}`),
		"followers unsorted":      `{"version": 1, "brokers": [1, 2, 3], "topics": {"orders": {"partition_count": 1, "replication_factor": 3, "partitions": [{"partition": 0, "leader": 1, "followers": [3, 2], "active": [1]}]}}}`,
		"v2 missing leader_epoch": v2With(`{"partition": 0, "leader": 1, "replicas": [1, 2], "active": [1, 2]}`),
		"v2 missing replicas":     v2With(`{"partition": 0, "leader": 1, "leader_epoch": 0, "active": [1, 2]}`),
		"v2 with followers":       v2With(`{"partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1, 2], "followers": [2], "active": [1, 2]}`),
		"v1 with replicas":        topicWith(`{"partition": 0, "leader": 1, "replicas": [1, 2], "active": [1, 2]}`),
		"v2 negative epoch":       v2With(`{"partition": 0, "leader": 1, "leader_epoch": -1, "replicas": [1, 2], "active": [1, 2]}`),
		"v2 float epoch":          v2With(`{"partition": 0, "leader": 1, "leader_epoch": 1.5, "replicas": [1, 2], "active": [1, 2]}`),
		"v2 replica twice":        v2With(`{"partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1, 1], "active": [1]}`),
		"v2 unknown replica":      v2With(`{"partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1, 9], "active": [1]}`),
		"v2 leader not a replica": v2With(`{"partition": 0, "leader": 3, "leader_epoch": 0, "replicas": [1, 2], "active": [1, 2, 3]}`),
		"v2 replica count vs rf":  v2With(`{"partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1, 2, 3], "active": [1]}`),
		"v2 active not a replica": v2With(`{"partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1, 2], "active": [1, 3]}`),
		"v2 replica zero":         v2With(`{"partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1, 0], "active": [1]}`),
		// Repeated keys, at every level, are refused as topic.meta and
		// offset files refuse them (durable.ObjectFields), not resolved to
		// the last value.
		"duplicate version":     `{"version": 1, "version": 1, "brokers": [], "topics": {}}`,
		"duplicate brokers":     `{"version": 1, "brokers": [1], "brokers": [1], "topics": {}}`,
		"duplicate topic":       `{"version": 1, "brokers": [1], "topics": {"t": {"partition_count": 1, "replication_factor": 1, "partitions": [{"partition": 0, "leader": 1, "followers": [], "active": [1]}]}, "t": {"partition_count": 1, "replication_factor": 1, "partitions": [{"partition": 0, "leader": 1, "followers": [], "active": [1]}]}}}`,
		"duplicate topic field": `{"version": 1, "brokers": [1], "topics": {"t": {"partition_count": 1, "partition_count": 1, "replication_factor": 1, "partitions": [{"partition": 0, "leader": 1, "followers": [], "active": [1]}]}}}`,
		"duplicate entry field": topicWith(`{"partition": 0, "leader": 1, "leader": 1, "followers": [2], "active": [1, 2]}`),
		"field name case":       `{"Version": 1, "brokers": [], "topics": {}}`,
		"topics not an object":  `{"version": 1, "brokers": [], "topics": []}`,
		"version float":         `{"version": 1.0, "brokers": [], "topics": {}}`,
		// A topic's configuration overrides are checked by the topic
		// layer's one rule (topic.ParseConfigOverrides), and must be in
		// the canonical form the encoder writes.
		"config null":          withConfig(`null`),
		"config empty":         withConfig(`{}`),
		"config not an object": withConfig(`["retention.ms"]`),
		"config number":        withConfig(`{"retention.ms": 3600000}`),
		"config value null":    withConfig(`{"retention.ms": null}`),
		"config unknown key":   withConfig(`{"compression.type": "zstd"}`),
		"config compact":       withConfig(`{"cleanup.policy": "compact"}`),
		"config list policy":   withConfig(`{"cleanup.policy": "delete,delete"}`),
		"config bad value":     withConfig(`{"segment.bytes": "12"}`),
		"config plus sign":     withConfig(`{"segment.ms": "+5"}`),
		"config not canonical": withConfig(`{"segment.ms": "05"}`),
		"config duplicate key": withConfig(`{"segment.ms": "5", "segment.ms": "6"}`),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, MetaFileName)
			require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
			_, err := Open(root)
			var me *MetadataError
			require.ErrorAs(t, err, &me)
			require.Equal(t, path, me.Path)
			after, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			require.Equal(t, content, string(after), "cluster.meta must be left untouched")
		})
	}
	// So is a bad configuration value.
	_, err := ParseClusterMeta([]byte(withConfig(`{"segment.bytes": "12"}`)))
	require.ErrorIs(t, err, topic.ErrInvalidConfig)
	// A bad topic name is reported with the topic layer's sentinel too.
	_, err = ParseClusterMeta([]byte(`{"version": 1, "brokers": [1], "topics": {"a b": {"partition_count": 1, "replication_factor": 1, "partitions": [{"partition": 0, "leader": 1, "followers": [], "active": [1]}]}}}`))
	require.ErrorIs(t, err, topic.ErrInvalidName)
}

// A WriteFile interrupted before its rename leaves cluster.meta.tmp behind;
// Open removes it and keeps the committed file.
func TestMetadataLeftoverTempRemoved(t *testing.T) {
	c, root := newCluster(t, 1)
	require.NoError(t, c.CreateTopic("t", 1, 1))
	require.NoError(t, c.Close())
	tmp := filepath.Join(root, MetaFileName+".tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("half-written"), 0o644))
	before, err := os.ReadFile(filepath.Join(root, MetaFileName))
	require.NoError(t, err)
	c2, err := Open(root)
	require.NoError(t, err)
	defer c2.Close()
	_, err = os.Stat(tmp)
	require.True(t, errors.Is(err, os.ErrNotExist))
	after, err := os.ReadFile(filepath.Join(root, MetaFileName))
	require.NoError(t, err)
	require.Equal(t, before, after)
}

// Encoding is canonical: whatever parses re-encodes to bytes that parse to
// the same value and encode to the same bytes again.
func FuzzParseClusterMeta(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "cluster.meta"))
	if err != nil {
		f.Fatal(err)
	}
	v1, err := os.ReadFile(filepath.Join("testdata", "cluster-v1.meta"))
	if err != nil {
		f.Fatal(err)
	}
	withConfig, err := os.ReadFile(filepath.Join("testdata", "cluster-config.meta"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add(golden)
	f.Add(v1)
	f.Add(withConfig)
	f.Add(append(append([]byte{}, golden...), "garbage"...))
	f.Add([]byte(`{"version": 1, "brokers": [], "topics": {}}`))
	f.Add([]byte(`{"version": 1, "brokers": [9223372036854775807], "topics": {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseClusterMeta(data)
		if err != nil {
			var me *MetadataError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a *MetadataError", err)
			}
			return
		}
		enc, err := EncodeClusterMeta(m)
		if err != nil {
			t.Fatalf("parsed metadata does not encode: %v", err)
		}
		m2, err := ParseClusterMeta(enc)
		if err != nil {
			t.Fatalf("encoded metadata does not parse: %v\n%s", err, enc)
		}
		enc2, err := EncodeClusterMeta(m2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not canonical: %v\n%s\n%s", err, enc, enc2)
		}
	})
}
