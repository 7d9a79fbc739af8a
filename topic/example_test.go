package topic_test

import (
	"fmt"
	"os"

	"github.com/pystream/pystream/topic"
)

// A topic with three partitions: keyed records always land on the key's
// partition, keyless ones go round robin, and every partition counts its
// own offsets from 0.
func Example() {
	root, err := os.MkdirTemp("", "pystream-topic-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)

	events, err := topic.Open(root, "events", 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()

	for _, key := range []string{"user-123", "user-123", "orders"} {
		res, err := events.Append([]byte(key), []byte("payload for "+key))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("key %-8s -> partition %d offset %d\n", key, res.Partition, res.Offset)
	}
	for range 3 {
		res, err := events.Append(nil, []byte("no key"))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("no key       -> partition %d offset %d\n", res.Partition, res.Offset)
	}

	recs, err := events.Read(2, 0, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		fmt.Printf("partition 2 offset %d: %s\n", r.Offset, r.Payload)
	}
	// Output:
	// key user-123 -> partition 2 offset 0
	// key user-123 -> partition 2 offset 1
	// key orders   -> partition 1 offset 0
	// no key       -> partition 0 offset 0
	// no key       -> partition 1 offset 1
	// no key       -> partition 2 offset 2
	// partition 2 offset 0: payload for user-123
	// partition 2 offset 1: payload for user-123
	// partition 2 offset 2: no key
}

// PartitionForKey depends on the key's bytes alone.
func ExamplePartitionForKey() {
	fmt.Println(topic.PartitionForKey([]byte("user-123"), 3))
	fmt.Println(topic.PartitionForKey([]byte("user-123"), 64))
	fmt.Println(topic.PartitionForKey([]byte{}, 7))
	// Output:
	// 2
	// 24
	// 1
}

// A topic's effective configuration is the server's defaults with the
// topic's overrides laid over them; every value is a decimal string.
func ExampleConfig_With() {
	overrides, err := topic.ParseConfigOverrides(map[string]string{"retention.ms": "3600000", "segment.bytes": "1048576"})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := topic.DefaultConfig().With(overrides)
	fmt.Println(c.RetentionMs, c.RetentionBytes, c.SegmentBytes, c.SegmentMs)

	_, err = topic.ParseConfigOverrides(map[string]string{"segment.bytes": "+1024"})
	fmt.Println(err)
	// Output:
	// 3600000 -1 1048576 604800000
	// topic: config "segment.bytes" = "+1024": not a decimal integer; allowed: bytes from 1024 to 1073741824
}
