package topic

import (
	"bytes"
	"errors"
	"maps"
	"testing"
)

// FuzzParseMetadata: the topic.meta decoder never panics, refuses with a
// *MetadataError only, accepts only documents that satisfy every rule, and
// whatever it accepts re-encodes to a document that decodes to the same
// value. Every file of its corpus is also fed to `pystream log verify`, which
// must refuse exactly the same ones (tools/internal/verify).
func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte(`{"version": 1, "name": "events", "partition_count": 3}`))
	f.Add([]byte("{\"version\": 1, \"name\": \"events\", \"partition_count\": 3}\ngarbage"))
	f.Add([]byte(`{"version": 1, "name": "..", "partition_count": 3}`))
	f.Add([]byte(`{"version": 2, "name": "e", "partition_count": -1, "x": [1, {"y": null}]}`))
	f.Add(bytes.Repeat([]byte("{"), 1000))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMetadata(data)
		if err != nil {
			var me *MetadataError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a *MetadataError", err)
			}
			return
		}
		if m.Version != MetadataVersion || m.PartitionCount < 1 || m.PartitionCount > MaxPartitionCount || ValidateName(m.Name) != nil {
			t.Fatalf("accepted invalid metadata %+v from %q", m, data)
		}
		again, err := ParseMetadata(encodeMetadata(m))
		if err != nil || again != m {
			t.Fatalf("round trip of %+v: %+v, %v", m, again, err)
		}
		twice, err := ParseMetadata(data)
		if err != nil || twice != m {
			t.Fatalf("second decode differs: %+v, %v", twice, err)
		}
	})
}

// FuzzParseConfigOverrides: the parser never panics, refuses with a
// *ConfigError naming a key of its input only, and what it accepts is
// canonical: parsing it again gives the same, and it lays over the
// defaults without error.
func FuzzParseConfigOverrides(f *testing.F) {
	f.Add("", "")
	f.Add("retention.ms", "3600000")
	f.Add("segment.bytes", "1023")
	f.Add("segment.ms", "+1")
	f.Add("retention.bytes", "-00")
	f.Add("retention.ms", "99999999999999999999")
	f.Add("nope", "1")
	f.Add("cleanup.policy", "compact, delete")
	f.Add("cleanup.policy", " delete")
	f.Add("min.insync.replicas", "02")
	f.Add("message.timestamp.type", "LogAppendTime")
	f.Add("message.timestamp.type", "createtime")
	f.Add("max.message.bytes", "01048588")
	f.Fuzz(func(t *testing.T, key, value string) {
		in := map[string]string{key: value}
		got, err := ParseConfigOverrides(in)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != key {
				t.Fatalf("error %v does not name key %q", err, key)
			}
			return
		}
		again, err := ParseConfigOverrides(got)
		if err != nil || !maps.Equal(again, got) {
			t.Fatalf("not canonical: %v -> %v, %v", got, again, err)
		}
		c, err := DefaultConfig().With(got)
		if err != nil || c.Validate() != nil {
			t.Fatalf("accepted %v, which does not apply: %v", got, err)
		}
		if c.Strings()[key] != got[key] {
			t.Fatalf("%s: effective %q, override %q", key, c.Strings()[key], got[key])
		}
	})
}
