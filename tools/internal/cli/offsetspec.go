package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// offsetKind is the form of a consume -o value.
type offsetKind int

const (
	offsetStart       offsetKind = iota // "start" (or "beginning"): offset 0
	offsetEnd                           // "end": the high watermark, only new records
	offsetAbsolute                      // "N": offset N
	offsetFromEnd                       // "-N": N records before the high watermark
	offsetCommitted                     // "committed" (or "stored"): the --commit-as offset
	offsetAfterCommit                   // "+N": N records after the --commit-as offset
)

// offsetSpec is a parsed -o value.
type offsetSpec struct {
	kind offsetKind
	n    uint64
}

// parseOffsetSpec parses a consume -o value.
func parseOffsetSpec(s string) (offsetSpec, error) {
	switch s {
	case "start", "beginning":
		return offsetSpec{kind: offsetStart}, nil
	case "end":
		return offsetSpec{kind: offsetEnd}, nil
	case "committed", "stored":
		return offsetSpec{kind: offsetCommitted}, nil
	}
	kind, digits := offsetAbsolute, s
	switch {
	case strings.HasPrefix(s, "-"):
		kind, digits = offsetFromEnd, s[1:]
	case strings.HasPrefix(s, "+"):
		kind, digits = offsetAfterCommit, s[1:]
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || digits == "" || digits[0] == '+' {
		return offsetSpec{}, fmt.Errorf("-o %q: want start, end, committed, N, -N or +N", s)
	}
	return offsetSpec{kind: kind, n: n}, nil
}

// needsCommitted reports whether the spec is relative to a committed offset.
func (o offsetSpec) needsCommitted() bool {
	return o.kind == offsetCommitted || o.kind == offsetAfterCommit
}

// resolve returns the first offset to fetch given the partition's high
// watermark and the consumer's committed offset (nil: never committed,
// which counts as 0). -N before offset 0 starts at 0; N past the high
// watermark is allowed and simply waits for (or, with -e, ends without)
// records, as seeking past the end does in phase 3.
func (o offsetSpec) resolve(hw uint64, committed *uint64) uint64 {
	var base uint64
	if committed != nil {
		base = *committed
	}
	switch o.kind {
	case offsetEnd:
		return hw
	case offsetAbsolute:
		return o.n
	case offsetFromEnd:
		if o.n > hw {
			return 0
		}
		return hw - o.n
	case offsetCommitted:
		return base
	case offsetAfterCommit:
		if base > ^uint64(0)-o.n {
			return ^uint64(0)
		}
		return base + o.n
	}
	return 0
}
