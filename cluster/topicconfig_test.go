package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// docs/design.md § Topic configuration: cluster.meta stores a topic's
// overrides only; the effective configuration is the cluster's defaults
// with them laid over. The golden file pins the "config" field; the
// golden file of a topic without overrides (TestMetadataGolden) is
// unchanged. Regenerate with: go test -run TestTopicConfigGolden -update
func TestTopicConfigGolden(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopicWithConfig("orders", 1, 2, map[string]string{"segment.bytes": "1048576", "retention.ms": "03600000"}))
	got, err := os.ReadFile(filepath.Join(root, MetaFileName))
	require.NoError(t, err)
	golden := filepath.Join("testdata", "cluster-config.meta")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))

	m, err := ParseClusterMeta(want)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"retention.ms": "3600000", "segment.bytes": "1048576"}, m.Topics["orders"].Config)
	again, err := EncodeClusterMeta(m)
	require.NoError(t, err)
	require.Equal(t, string(want), string(again))
}

func TestTopicConfigCreateAndAlter(t *testing.T) {
	root := t.TempDir()
	defaults := topic.DefaultConfig()
	defaults.RetentionMs = 1000
	c, err := OpenWithOptions(root, Options{TopicDefaults: &defaults})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 2; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	want := topic.DefaultConfig()
	want.RetentionMs = 1000
	require.Equal(t, want, c.TopicDefaults())

	require.NoError(t, c.CreateTopic("plain", 1, 1))
	got, err := c.TopicConfig("plain")
	require.NoError(t, err)
	require.Equal(t, want, got)
	overrides, err := c.TopicConfigOverrides("plain")
	require.NoError(t, err)
	require.Nil(t, overrides)

	require.NoError(t, c.CreateTopicWithConfig("tuned", 1, 2, map[string]string{"segment.bytes": "2048"}))
	got, err = c.TopicConfig("tuned")
	require.NoError(t, err)
	require.Equal(t, int64(2048), got.SegmentBytes)
	require.Equal(t, int64(1000), got.RetentionMs)

	// The broker's accessor gives the same, for whoever opens its logs.
	b := c.broker(1)
	got2, err := b.TopicConfig("tuned")
	require.NoError(t, err)
	require.Equal(t, got, got2)

	// The same creation again is the same settings; other overrides are not.
	var exists *TopicExistsError
	require.ErrorAs(t, c.CreateTopicWithConfig("tuned", 1, 2, map[string]string{"segment.bytes": "2048"}), &exists)
	require.True(t, exists.SameSettings)
	require.ErrorAs(t, c.CreateTopicWithConfig("tuned", 1, 2, nil), &exists)
	require.False(t, exists.SameSettings)

	// Alter: set one, remove the other; journaled with before and after.
	end, err := c.JournalEnd()
	require.NoError(t, err)
	got, err = c.AlterTopicConfig("tuned", map[string]string{"retention.ms": "-1"}, []string{"segment.bytes"})
	require.NoError(t, err)
	want.RetentionMs = -1
	require.Equal(t, want, got)
	overrides, err = c.TopicConfigOverrides("tuned")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"retention.ms": "-1"}, overrides)
	entries, err := c.Journal(end, 10)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	require.Equal(t, EventAlterConfig, entries[0].Event)
	require.Equal(t, PhaseIntent, entries[0].Phase)
	require.Equal(t, map[string]string{"segment.bytes": "2048"}, entries[0].ConfigBefore)
	require.Equal(t, map[string]string{"retention.ms": "-1"}, entries[0].ConfigAfter)
	require.Equal(t, PhaseDone, entries[1].Phase)
	require.Contains(t, entries[1].String(), "alter-config done tuned:")

	// A change that changes nothing writes nothing.
	_, err = c.AlterTopicConfig("tuned", map[string]string{"retention.ms": "-1"}, nil)
	require.NoError(t, err)
	end2, err := c.JournalEnd()
	require.NoError(t, err)
	require.Equal(t, end+2, end2)

	// Kept across a reopen.
	c = reopen(t, c, root, 2)
	overrides, err = c.TopicConfigOverrides("tuned")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"retention.ms": "-1"}, overrides)
}

// A bad key or value is refused naming the key, before anything is
// touched: no topic, no change, no file.
func TestTopicConfigRefusals(t *testing.T) {
	c, root := newCluster(t, 1)
	before := snapshot(t, root)
	for _, bad := range []map[string]string{{"nope": "1"}, {"segment.bytes": "12"}, {"retention.ms": "+5"}} {
		err := c.CreateTopicWithConfig("t", 1, 1, bad)
		var ce *topic.ConfigError
		require.ErrorAs(t, err, &ce)
		require.ErrorIs(t, err, topic.ErrInvalidConfig)
	}
	require.Equal(t, before, snapshot(t, root))
	_, err := c.Topic("t")
	require.ErrorIs(t, err, ErrUnknownTopic)

	require.NoError(t, c.CreateTopicWithConfig("t", 1, 1, map[string]string{"segment.ms": "10"}))
	before = snapshot(t, root)
	end, err := c.JournalEnd()
	require.NoError(t, err)
	_, err = c.AlterTopicConfig("t", map[string]string{"retention.ms": "5", "segment.ms": "0"}, nil)
	var ce *topic.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "segment.ms", ce.Key)
	_, err = c.AlterTopicConfig("t", nil, []string{"compression.type"})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "compression.type", ce.Key)
	_, err = c.AlterTopicConfig("t", map[string]string{"cleanup.policy": "compact"}, nil)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "cleanup.policy", ce.Key)
	require.Equal(t, before, snapshot(t, root))
	end2, err := c.JournalEnd()
	require.NoError(t, err)
	require.Equal(t, end, end2, "a refused change is not journaled")

	_, err = c.AlterTopicConfig("nope", nil, nil)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.TopicConfig("nope")
	require.ErrorIs(t, err, ErrUnknownTopic)

	bad := topic.DefaultConfig()
	bad.SegmentBytes = 10
	_, err = OpenWithOptions(t.TempDir(), Options{TopicDefaults: &bad})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "segment.bytes", ce.Key)
}

// An intent left without an outcome is completed when cluster.meta holds
// its overrides, rolled back when it does not:
// docs/design.md § The journal.
func TestTopicConfigReconcile(t *testing.T) {
	c, root := newCluster(t, 1)
	require.NoError(t, c.CreateTopic("t", 1, 1))
	_, err := c.files.journal.append(JournalEntry{Event: EventAlterConfig, Phase: PhaseIntent, By: ByOperator, Topic: "t",
		Summary: "t: x", ConfigAfter: map[string]string{"segment.ms": "5"}})
	require.NoError(t, err)
	_, err = c.files.journal.append(JournalEntry{Event: EventAlterConfig, Phase: PhaseIntent, By: ByOperator, Topic: "t",
		Summary: "t: y", ConfigBefore: map[string]string{"segment.ms": "5"}})
	require.NoError(t, err)
	c = reopen(t, c, root, 1)
	entries, err := c.Journal(0, 100)
	require.NoError(t, err)
	var phases []JournalPhase
	for _, e := range entries {
		if e.Event == EventAlterConfig && e.By == ByStartup {
			phases = append(phases, e.Phase)
		}
	}
	require.Equal(t, []JournalPhase{PhaseRolledBack, PhaseCompleted}, phases)
}

func TestMetaStateAlterConfig(t *testing.T) {
	s := newMetaState(t, 2)
	mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "t", Partitions: 1, ReplicationFactor: 2,
		Config: map[string]string{"segment.bytes": "01024"}})
	require.Equal(t, map[string]string{"segment.bytes": "1024"}, s.Meta.Topics["t"].Config)

	var exists *TopicExistsError
	require.ErrorAs(t, applyRefused(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "t", Partitions: 1, ReplicationFactor: 2}), &exists)
	require.False(t, exists.SameSettings)
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "u", Partitions: 1, ReplicationFactor: 2,
		Config: map[string]string{"segment.bytes": "1"}}), topic.ErrInvalidConfig)

	end := s.JournalEnd()
	res := mustApply(t, s, MetaCommand{Op: OpAlterConfig, Time: metaT0, Topic: "t",
		Config: map[string]string{"retention.ms": "60000"}, DeleteConfig: []string{"segment.bytes"}})
	require.Contains(t, res.Summary, "segment.bytes=1024 -> retention.ms=60000")
	require.Equal(t, map[string]string{"retention.ms": "60000"}, s.Meta.Topics["t"].Config)
	require.Equal(t, end+1, s.JournalEnd())
	e := s.Journal[len(s.Journal)-1]
	require.Equal(t, EventAlterConfig, e.Event)
	require.Equal(t, map[string]string{"segment.bytes": "1024"}, e.ConfigBefore)
	require.Equal(t, map[string]string{"retention.ms": "60000"}, e.ConfigAfter)

	// Refusals leave the state as it was (applyRefused checks).
	var ce *topic.ConfigError
	require.ErrorAs(t, applyRefused(t, s, MetaCommand{Op: OpAlterConfig, Time: metaT0, Topic: "t",
		Config: map[string]string{"retention.ms": "1", "nope": "2"}}), &ce)
	require.Equal(t, "nope", ce.Key)
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpAlterConfig, Time: metaT0, Topic: "x"}), ErrUnknownTopic)

	// Removing the last override leaves none; the snapshot round-trips.
	mustApply(t, s, MetaCommand{Op: OpAlterConfig, Time: metaT0, Topic: "t", DeleteConfig: []string{"retention.ms"}})
	require.Nil(t, s.Meta.Topics["t"].Config)
	back, err := ParseMetaState(encodeMeta(t, s))
	require.NoError(t, err)
	require.Equal(t, encodeMeta(t, s), encodeMeta(t, back))

	// The command travels as JSON (a Raft log entry).
	raw, err := EncodeMetaCommand(MetaCommand{Op: OpAlterConfig, Topic: "t", Config: map[string]string{"segment.ms": "5"}, DeleteConfig: []string{"retention.ms"}})
	require.NoError(t, err)
	cmd, err := ParseMetaCommand(raw)
	require.NoError(t, err)
	require.Equal(t, []string{"retention.ms"}, cmd.DeleteConfig)
	require.Equal(t, map[string]string{"segment.ms": "5"}, cmd.Config)
}
