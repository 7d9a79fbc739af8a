package topic

import (
	"errors"
	"maps"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Kafka's defaults (retention.ms 7 days, retention.bytes -1, segment.bytes
// 1 GiB in Kafka, 128 MiB here, segment.ms 7 days).
func TestConfigDefaults(t *testing.T) {
	d := DefaultConfig()
	require.NoError(t, d.Validate())
	require.Equal(t, map[string]string{"retention.ms": "604800000", "retention.bytes": "-1",
		"segment.bytes": "134217728", "segment.ms": "604800000",
		"min.insync.replicas": "1", "cleanup.policy": "delete",
		"max.message.bytes": "1048588", "message.timestamp.type": "CreateTime"}, d.Strings())
	require.Equal(t, []string{"cleanup.policy", "max.message.bytes", "message.timestamp.type", "min.insync.replicas", "retention.bytes", "retention.ms", "segment.bytes", "segment.ms"}, ConfigKeys())
	require.True(t, IsIntegerKey(MinInsyncReplicasKey))
	require.False(t, IsIntegerKey(CleanupPolicyKey))
	require.True(t, IsIntegerKey(MaxMessageBytesKey))
	require.False(t, IsIntegerKey(MessageTimestampTypeKey))
	require.False(t, IsIntegerKey("nope"))
}

func TestConfigParseValue(t *testing.T) {
	cases := []struct {
		key, value string
		want       string
		ok         bool
		reason     string
	}{
		{RetentionMsKey, "-1", "-1", true, ""},
		{RetentionMsKey, "0", "0", true, ""},
		{RetentionMsKey, "3600000", "3600000", true, ""},
		{RetentionMsKey, "9223372036854775807", "9223372036854775807", true, ""},
		{RetentionMsKey, "9223372036854775808", "", false, ""},
		{RetentionMsKey, "-2", "", false, ""},
		{RetentionMsKey, "007", "7", true, ""},
		{RetentionMsKey, "-0", "0", true, ""},
		{RetentionMsKey, "+5", "", false, ""},
		{RetentionMsKey, " 5", "", false, ""},
		{RetentionMsKey, "5 ", "", false, ""},
		{RetentionMsKey, "1_000", "", false, ""},
		{RetentionMsKey, "1e3", "", false, ""},
		{RetentionMsKey, "0x10", "", false, ""},
		{RetentionMsKey, "1.5", "", false, ""},
		{RetentionMsKey, "", "", false, ""},
		{RetentionMsKey, "-", "", false, ""},
		{RetentionBytesKey, "-1", "-1", true, ""},
		{RetentionBytesKey, "1073741824", "1073741824", true, ""},
		{RetentionBytesKey, "-5", "", false, ""},
		{SegmentBytesKey, "1024", "1024", true, ""},
		{SegmentBytesKey, "1023", "", false, ""},
		{SegmentBytesKey, "1073741824", "1073741824", true, ""},
		{SegmentBytesKey, "1073741825", "", false, ""},
		{SegmentBytesKey, "-1", "", false, ""},
		{SegmentMsKey, "1", "1", true, ""},
		{SegmentMsKey, "0", "", false, ""},
		{SegmentMsKey, "-1", "", false, ""},
		{MinInsyncReplicasKey, "1", "1", true, ""},
		{MinInsyncReplicasKey, "2", "2", true, ""},
		{MinInsyncReplicasKey, "02", "2", true, ""},
		{MinInsyncReplicasKey, "2147483647", "2147483647", true, ""},
		{MinInsyncReplicasKey, "2147483648", "", false, "out of range"},
		{MinInsyncReplicasKey, "0", "", false, "out of range"},
		{MinInsyncReplicasKey, "-1", "", false, "out of range"},
		{MinInsyncReplicasKey, "two", "", false, "not a decimal integer"},
		{CleanupPolicyKey, "delete", "delete", true, ""},
		{CleanupPolicyKey, " delete ", "delete", true, ""},
		{CleanupPolicyKey, "delete,delete", "delete", true, ""},
		{CleanupPolicyKey, "compact", "", false, "compaction does not exist"},
		{CleanupPolicyKey, "compact,delete", "", false, "compaction does not exist"},
		{CleanupPolicyKey, "delete, compact", "", false, "compaction does not exist"},
		{CleanupPolicyKey, "Delete", "", false, "not a cleanup policy"},
		{CleanupPolicyKey, "", "", false, "not a cleanup policy"},
		{CleanupPolicyKey, "delete,", "", false, "not a cleanup policy"},
		{CleanupPolicyKey, "1", "", false, "not a cleanup policy"},
		{"cleanup.policies", "delete", "", false, "unknown key"},
		{MaxMessageBytesKey, "0", "0", true, ""},
		{MaxMessageBytesKey, "1048588", "1048588", true, ""},
		{MaxMessageBytesKey, "0100", "100", true, ""},
		{MaxMessageBytesKey, "2147483647", "2147483647", true, ""},
		{MaxMessageBytesKey, "2147483648", "", false, "out of range"},
		{MaxMessageBytesKey, "-1", "", false, "out of range"},
		{MaxMessageBytesKey, "1MB", "", false, "not a decimal integer"},
		{MessageTimestampTypeKey, "CreateTime", "CreateTime", true, ""},
		{MessageTimestampTypeKey, "LogAppendTime", "LogAppendTime", true, ""},
		{MessageTimestampTypeKey, "logappendtime", "", false, "not a timestamp type"},
		{MessageTimestampTypeKey, " CreateTime", "", false, "not a timestamp type"},
		{MessageTimestampTypeKey, "", "", false, "not a timestamp type"},
		{MessageTimestampTypeKey, "1", "", false, "not a timestamp type"},
		{"message.timestamp", "CreateTime", "", false, "unknown key"},
		{"Retention.ms", "1", "", false, ""},
	}
	for _, c := range cases {
		t.Run(c.key+"="+strconv.Quote(c.value), func(t *testing.T) {
			got, err := ParseConfigValue(c.key, c.value)
			if !c.ok {
				var ce *ConfigError
				require.ErrorAs(t, err, &ce)
				require.ErrorIs(t, err, ErrInvalidConfig)
				require.Equal(t, c.key, ce.Key)
				require.Contains(t, err.Error(), strconv.Quote(c.key))
				require.Contains(t, err.Error(), c.reason)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestConfigParseOverrides(t *testing.T) {
	got, err := ParseConfigOverrides(map[string]string{"retention.ms": "0100", "segment.bytes": "1048576"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"retention.ms": "100", "segment.bytes": "1048576"}, got)

	got, err = ParseConfigOverrides(nil)
	require.NoError(t, err)
	require.Nil(t, got)

	// Several bad keys: the first in sorted order is named, every time.
	for range 5 {
		_, err = ParseConfigOverrides(map[string]string{"zzz": "1", "segment.ms": "0", "retention.ms": "x"})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, "retention.ms", ce.Key)
	}
}

func TestConfigWith(t *testing.T) {
	d := DefaultConfig()
	c, err := d.With(map[string]string{"retention.ms": "-1", "segment.bytes": "1024"})
	require.NoError(t, err)
	want := d
	want.RetentionMs, want.SegmentBytes = -1, 1024
	require.Equal(t, want, c)

	c, err = d.With(map[string]string{"retention.ms": "-1", "segment.bytes": "1"})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "segment.bytes", ce.Key)
	require.Equal(t, d, c, "unchanged on error")
}

func TestConfigAlterOverrides(t *testing.T) {
	cur := map[string]string{"retention.ms": "1000", "segment.ms": "5"}
	before := maps.Clone(cur)
	cases := []struct {
		name    string
		set     map[string]string
		remove  []string
		want    map[string]string
		badKey  string
		noError bool
	}{
		{name: "set", set: map[string]string{"segment.bytes": "2048"}, noError: true,
			want: map[string]string{"retention.ms": "1000", "segment.ms": "5", "segment.bytes": "2048"}},
		{name: "replace", set: map[string]string{"retention.ms": "-1"}, noError: true,
			want: map[string]string{"retention.ms": "-1", "segment.ms": "5"}},
		{name: "remove", remove: []string{"segment.ms"}, noError: true, want: map[string]string{"retention.ms": "1000"}},
		{name: "remove all", remove: []string{"segment.ms", "retention.ms"}, noError: true, want: nil},
		{name: "remove absent", remove: []string{"retention.bytes"}, noError: true, want: cur},
		{name: "bad value", set: map[string]string{"segment.bytes": "1", "retention.bytes": "5"}, badKey: "segment.bytes"},
		{name: "unknown set", set: map[string]string{"nope": "1"}, badKey: "nope"},
		{name: "unknown remove", remove: []string{"nope"}, badKey: "nope"},
		{name: "set and removed", set: map[string]string{"segment.ms": "9"}, remove: []string{"segment.ms"}, badKey: "segment.ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AlterConfigOverrides(cur, c.set, c.remove)
			if c.noError {
				require.NoError(t, err)
				require.Equal(t, c.want, got)
			} else {
				var ce *ConfigError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, c.badKey, ce.Key)
				require.Nil(t, got)
			}
			require.Equal(t, before, cur, "the current overrides are never modified")
		})
	}
}

func TestConfigValidate(t *testing.T) {
	c := DefaultConfig()
	c.SegmentMs = 0
	var ce *ConfigError
	require.ErrorAs(t, c.Validate(), &ce)
	require.Equal(t, SegmentMsKey, ce.Key)
	require.True(t, errors.Is(c.Validate(), ErrInvalidConfig))
}

// cleanup.policy and min.insync.replicas travel through overrides, With
// and AlterConfigOverrides as every key does; compact is refused with a
// reason that says compaction does not exist yet, and changes nothing.
func TestConfigPolicyAndMinInsync(t *testing.T) {
	got, err := ParseConfigOverrides(map[string]string{"cleanup.policy": " delete", "min.insync.replicas": "003"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"cleanup.policy": "delete", "min.insync.replicas": "3"}, got)
	c, err := DefaultConfig().With(got)
	require.NoError(t, err)
	require.Equal(t, int64(3), c.MinInsyncReplicas)
	require.Equal(t, "delete", c.CleanupPolicy)
	require.NoError(t, c.Validate())

	cur := map[string]string{"min.insync.replicas": "2"}
	_, err = AlterConfigOverrides(cur, map[string]string{"cleanup.policy": "compact"}, nil)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, CleanupPolicyKey, ce.Key)
	require.Contains(t, ce.Reason, "compaction does not exist in PyStream yet")
	require.Equal(t, map[string]string{"min.insync.replicas": "2"}, cur)

	bad := DefaultConfig()
	bad.CleanupPolicy = "compact"
	require.ErrorAs(t, bad.Validate(), &ce)
	require.Equal(t, CleanupPolicyKey, ce.Key)
	bad = DefaultConfig()
	bad.MinInsyncReplicas = 0
	require.ErrorAs(t, bad.Validate(), &ce)
	require.Equal(t, MinInsyncReplicasKey, ce.Key)

	n, err := ConfigInt(MinInsyncReplicasKey, "2")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	_, err = ConfigInt(CleanupPolicyKey, "delete")
	require.ErrorIs(t, err, ErrInvalidConfig)
}

// max.message.bytes and message.timestamp.type travel through
// overrides, With and AlterConfigOverrides as every key does; a bad
// timestamp type is refused naming the key, and changes nothing.
func TestConfigMessageBytesAndTimestampType(t *testing.T) {
	got, err := ParseConfigOverrides(map[string]string{"message.timestamp.type": "LogAppendTime", "max.message.bytes": "004096"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"message.timestamp.type": "LogAppendTime", "max.message.bytes": "4096"}, got)
	c, err := DefaultConfig().With(got)
	require.NoError(t, err)
	require.Equal(t, int64(4096), c.MaxMessageBytes)
	require.Equal(t, TimestampLogAppendTime, c.MessageTimestampType)
	require.NoError(t, c.Validate())
	require.Equal(t, "LogAppendTime", c.Strings()[MessageTimestampTypeKey])

	cur := map[string]string{"max.message.bytes": "4096"}
	_, err = AlterConfigOverrides(cur, map[string]string{"message.timestamp.type": "AppendTime"}, nil)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, MessageTimestampTypeKey, ce.Key)
	require.Contains(t, ce.Reason, "CreateTime or LogAppendTime")
	require.Equal(t, map[string]string{"max.message.bytes": "4096"}, cur)
	after, err := AlterConfigOverrides(cur, map[string]string{"message.timestamp.type": "CreateTime"}, []string{"max.message.bytes"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"message.timestamp.type": "CreateTime"}, after)

	bad := DefaultConfig()
	bad.MessageTimestampType = ""
	require.ErrorAs(t, bad.Validate(), &ce)
	require.Equal(t, MessageTimestampTypeKey, ce.Key)
	bad = DefaultConfig()
	bad.MaxMessageBytes = -1
	require.ErrorAs(t, bad.Validate(), &ce)
	require.Equal(t, MaxMessageBytesKey, ce.Key)

	n, err := ConfigInt(MaxMessageBytesKey, "4096")
	require.NoError(t, err)
	require.Equal(t, int64(4096), n)
	_, err = ConfigInt(MessageTimestampTypeKey, "CreateTime")
	require.ErrorIs(t, err, ErrInvalidConfig)
}
