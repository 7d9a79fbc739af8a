package replication

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pystream/pystream/cluster"
)

// maxAbortedHeader bounds the aborted transactions one answer's header
// may list: cluster reads report at most 1000.
const maxAbortedHeader = 4096

// FormatAborted is the HeaderAborted value of a stable read's aborted
// transactions: "producer:first" pairs in decimal, comma-separated; ""
// for none.
func FormatAborted(aborted []cluster.AbortedTxn) string {
	var b strings.Builder
	for i, a := range aborted {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(a.ProducerID, 10))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(a.FirstOffset, 10))
	}
	return b.String()
}

// ParseAborted reads a HeaderAborted value (FormatAborted's): a
// malformed one is an error naming what is wrong.
func ParseAborted(s string) ([]cluster.AbortedTxn, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxAbortedHeader {
		return nil, fmt.Errorf("aborted transactions: %d listed, at most %d", len(parts), maxAbortedHeader)
	}
	out := make([]cluster.AbortedTxn, 0, len(parts))
	for _, part := range parts {
		pid, first, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("aborted transactions: %q is not producer:first", part)
		}
		id, err := strconv.ParseInt(pid, 10, 64)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("aborted transactions: producer id %q", pid)
		}
		off, err := strconv.ParseUint(first, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("aborted transactions: first offset %q", first)
		}
		out = append(out, cluster.AbortedTxn{ProducerID: id, FirstOffset: off})
	}
	return out, nil
}
