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
		"segment.bytes": "134217728", "segment.ms": "604800000"}, d.Strings())
	require.Equal(t, []string{"retention.bytes", "retention.ms", "segment.bytes", "segment.ms"}, ConfigKeys())
}

func TestConfigParseValue(t *testing.T) {
	cases := []struct {
		key, value string
		want       int64
		ok         bool
	}{
		{RetentionMsKey, "-1", -1, true},
		{RetentionMsKey, "0", 0, true},
		{RetentionMsKey, "3600000", 3600000, true},
		{RetentionMsKey, "9223372036854775807", 9223372036854775807, true},
		{RetentionMsKey, "9223372036854775808", 0, false},
		{RetentionMsKey, "-2", 0, false},
		{RetentionMsKey, "007", 7, true},
		{RetentionMsKey, "-0", 0, true},
		{RetentionMsKey, "+5", 0, false},
		{RetentionMsKey, " 5", 0, false},
		{RetentionMsKey, "5 ", 0, false},
		{RetentionMsKey, "1_000", 0, false},
		{RetentionMsKey, "1e3", 0, false},
		{RetentionMsKey, "0x10", 0, false},
		{RetentionMsKey, "1.5", 0, false},
		{RetentionMsKey, "", 0, false},
		{RetentionMsKey, "-", 0, false},
		{RetentionBytesKey, "-1", -1, true},
		{RetentionBytesKey, "1073741824", 1073741824, true},
		{RetentionBytesKey, "-5", 0, false},
		{SegmentBytesKey, "1024", 1024, true},
		{SegmentBytesKey, "1023", 0, false},
		{SegmentBytesKey, "1073741824", 1073741824, true},
		{SegmentBytesKey, "1073741825", 0, false},
		{SegmentBytesKey, "-1", 0, false},
		{SegmentMsKey, "1", 1, true},
		{SegmentMsKey, "0", 0, false},
		{SegmentMsKey, "-1", 0, false},
		{"cleanup.policy", "delete", 0, false},
		{"Retention.ms", "1", 0, false},
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
