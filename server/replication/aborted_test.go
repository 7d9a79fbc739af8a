package replication

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pystream/pystream/cluster"
)

// A stable read's aborted transactions cross the wire unchanged, and a
// malformed header is refused with a reason.
func TestAbortedHeaderRoundTrip(t *testing.T) {
	for _, in := range [][]cluster.AbortedTxn{nil, {{ProducerID: 7, FirstOffset: 0}}, {{ProducerID: 1, FirstOffset: 10}, {ProducerID: 1 << 40, FirstOffset: 1<<64 - 1}}} {
		got, err := ParseAborted(FormatAborted(in))
		if err != nil || !reflect.DeepEqual(got, in) {
			t.Fatalf("round trip of %v = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"7", "7:", ":3", "-1:3", "x:1", "1:-2", "1:2,", strings.Repeat("1:1,", maxAbortedHeader) + "1:1"} {
		if got, err := ParseAborted(bad); err == nil {
			t.Errorf("ParseAborted(%.20q) = %v, want an error", bad, got)
		}
	}
}

func FuzzParseAborted(f *testing.F) {
	f.Add("")
	f.Add("7:0,8:12")
	f.Add("1:")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseAborted(s)
		if err != nil {
			return
		}
		again, err := ParseAborted(FormatAborted(got))
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("%q: parsed %v, re-parsed %v, %v", s, got, again, err)
		}
	})
}
