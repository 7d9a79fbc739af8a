package verify

import (
	"errors"
	"testing"
)

// The metadata decoders take any bytes: they must never panic, must return
// either a value or an error wrapping ErrMetadata, and must decide the same
// way twice.

func FuzzParseTopicMeta(f *testing.F) {
	f.Add([]byte(``))
	f.Add([]byte(`{"version": 1, "name": "orders", "partition_count": 3}`))
	f.Add([]byte(`{"version": 1, "name": "orders", "partition_count": 3}garbage`))
	f.Add([]byte(`{"version": 1, "name": "..", "partition_count": 2147483647}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m1, err1 := ParseTopicMeta(data, "")
		m2, err2 := ParseTopicMeta(data, "")
		if (err1 == nil) != (err2 == nil) || m1 != m2 {
			t.Fatalf("two decodes differ")
		}
		if err1 != nil && !errors.Is(err1, ErrMetadata) {
			t.Fatalf("error does not wrap ErrMetadata: %v", err1)
		}
		if err1 == nil && m1.PartitionCount < 1 {
			t.Fatalf("accepted partition count %d", m1.PartitionCount)
		}
	})
}

func FuzzParseOffset(f *testing.F) {
	f.Add([]byte(``))
	f.Add([]byte(`{"version": 1, "offset": 123}`))
	f.Add([]byte(`{"version": 1, "offset": -1}`))
	f.Add([]byte(`{"version": 1, "offset": 18446744073709551616}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o1, err1 := ParseOffset(data)
		o2, err2 := ParseOffset(data)
		if (err1 == nil) != (err2 == nil) || o1 != o2 {
			t.Fatalf("two decodes differ")
		}
		if err1 != nil && !errors.Is(err1, ErrMetadata) {
			t.Fatalf("error does not wrap ErrMetadata: %v", err1)
		}
	})
}

func FuzzParseClusterMeta(f *testing.F) {
	f.Add([]byte(``))
	f.Add([]byte(`{"version": 1, "brokers": [1, 2, 3], "topics": {"orders": {"partition_count": 1, "replication_factor": 2, "partitions": [{"partition": 0, "leader": 1, "followers": [2], "active": [1, 2]}]}}}`))
	f.Add([]byte(`{"version": 1, "brokers": [1], "topics": {"t": {"partition_count": 1, "replication_factor": 1, "partitions": [{"partition": 0, "leader": 1, "followers": [], "active": [1]}]}}} x`))
	f.Add([]byte(`{"version": 1, "brokers": [-1], "topics": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseClusterMeta(data)
		_, err2 := ParseClusterMeta(data)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("two decodes differ")
		}
		if err != nil {
			if !errors.Is(err, ErrMetadata) {
				t.Fatalf("error does not wrap ErrMetadata: %v", err)
			}
			return
		}
		for name, ta := range m.Topics {
			if len(ta.Partitions) != ta.PartitionCount {
				t.Fatalf("topic %q: accepted %d partitions for count %d", name, len(ta.Partitions), ta.PartitionCount)
			}
			for _, p := range ta.Partitions {
				if !p.IsActive(p.Leader) {
					t.Fatalf("accepted an inactive leader")
				}
			}
		}
	})
}
