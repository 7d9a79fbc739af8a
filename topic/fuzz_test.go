package topic

import (
	"bytes"
	"errors"
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
