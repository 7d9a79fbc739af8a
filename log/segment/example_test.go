package segment_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pystream/pystream/log/segment"
)

// A segmented log rolls to a new segment file when the active one is full;
// reads cross segments transparently.
func Example() {
	dir, _ := os.MkdirTemp("", "segment-example")
	defer os.RemoveAll(dir)

	l, err := segment.Open(filepath.Join(dir, "orders-0"), segment.Options{SegmentBytes: segment.MinSegmentBytes})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	for i := range 3 {
		if _, err := l.Append(make([]byte, 400+i)); err != nil { // 424+ bytes a frame: two fit in 1 KiB
			fmt.Println(err)
			return
		}
	}
	for _, s := range l.Segments() {
		fmt.Println(filepath.Base(s.Path), s.Base, s.Next, s.Sealed)
	}
	recs, _ := l.Read(1, 10)
	fmt.Println(len(recs), "record(s) from offset 1, across the roll")
	recs, _ = l.Read(2, 10)
	fmt.Println(recs[0].Offset, len(recs[0].Payload))
	// Output:
	// 00000000000000000000.log 0 2 true
	// 00000000000000000002.log 2 3 false
	// 2 record(s) from offset 1, across the roll
	// 2 402
}

// PlanRetention is a pure function: the caller feeds it Segments and the
// high watermark, then raises the start with AdvanceStart.
func ExamplePlanRetention() {
	now := time.Unix(10_000, 0)
	hour := int64(time.Hour)
	segs := []segment.SegmentInfo{
		{Base: 0, Next: 100, Size: 1 << 20, MaxTimestamp: now.UnixNano() - 30*hour, Sealed: true},
		{Base: 100, Next: 200, Size: 1 << 20, MaxTimestamp: now.UnixNano() - 20*hour, Sealed: true},
		{Base: 200, Next: 250, Size: 1 << 19, MaxTimestamp: now.UnixNano()},
	}
	start, drop := segment.PlanRetention(segs, segment.RetentionPolicy{Age: 24 * time.Hour, Bytes: -1}, now, 250)
	fmt.Println("by age:", drop, "segment(s), new start", start)
	start, drop = segment.PlanRetention(segs, segment.RetentionPolicy{Age: -1, Bytes: 1 << 20}, now, 250)
	fmt.Println("by bytes:", drop, "segment(s), new start", start)
	start, drop = segment.PlanRetention(segs, segment.RetentionPolicy{Age: -1, Bytes: 0}, now, 150)
	fmt.Println("held by the high watermark:", drop, "segment(s), new start", start)
	// Output:
	// by age: 1 segment(s), new start 100
	// by bytes: 2 segment(s), new start 200
	// held by the high watermark: 1 segment(s), new start 100
}
