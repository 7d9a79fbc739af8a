package cli

import (
	"slices"
	"strconv"
	"strings"
)

// This file words what a failed produce tells the user: which lines of
// stdin were acknowledged. Produce sends line n as the n-th record and stops
// at the first batch the server refuses, so lines 1..sent before that batch
// were all acknowledged, and the refused batch's answer says, record by
// record, which of its lines were. Line numbers are what a user can act on:
// `tail -n +N` resends from a line, and stdout's k-th "partition P offset O"
// line is the k-th acknowledged line.

// lineRun is the lines from..to, both included.
type lineRun struct{ from, to int }

// lines is a set of line numbers as ascending, non-adjacent runs.
type lines []lineRun

// add appends line n, larger than every line in the set.
func (ls lines) add(n int) lines {
	if k := len(ls); k > 0 && ls[k-1].to+1 == n {
		ls[k-1].to = n
		return ls
	}
	return append(ls, lineRun{n, n})
}

// addRun appends the lines from..to, all larger than every line in the set;
// an empty run (to < from) adds nothing.
func (ls lines) addRun(from, to int) lines {
	if to < from {
		return ls
	}
	ls = ls.add(from)
	ls[len(ls)-1].to = to
	return ls
}

// one reports whether the set holds exactly one line.
func (ls lines) one() bool { return len(ls) == 1 && ls[0].from == ls[0].to }

// String renders the set with its noun: "line 4", "lines 1-3",
// "lines 1-3, 5 and 7-9".
func (ls lines) String() string {
	parts := make([]string, len(ls))
	for i, r := range ls {
		parts[i] = strconv.Itoa(r.from)
		if r.to > r.from {
			parts[i] += "-" + strconv.Itoa(r.to)
		}
	}
	s := "lines "
	if ls.one() {
		s = "line "
	}
	if len(parts) == 1 {
		return s + parts[0]
	}
	return s + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// was is the verb that agrees with the set.
func (ls lines) was() string {
	if ls.one() {
		return "was"
	}
	return "were"
}

// refusedBatchOutcome says which lines were acknowledged when the server
// refused a batch: lines 1..sent before it, and line sent+i+1 of the batch
// when acked[i]. At least one line of the batch was not acknowledged.
// Nothing after the batch was sent (produce stops there), which the docs
// say rather than every message: whether stdin had more lines is not known
// when the batch fails.
//
//	line 1 was not acknowledged
//	lines 1-40 and 42 were acknowledged, lines 41 and 43-50 were not
func refusedBatchOutcome(sent int, acked []bool) string {
	yes := lines{}.addRun(1, sent)
	var no lines
	for i, ok := range acked {
		if ok {
			yes = yes.add(sent + i + 1)
		} else {
			no = no.add(sent + i + 1)
		}
	}
	var s string
	if len(yes) == 0 {
		s = no.String() + " " + no.was() + " not acknowledged"
	} else {
		s = yes.String() + " " + yes.was() + " acknowledged, " + no.String() + " " + no.was() + " not"
	}
	return s
}

// unknownBatchOutcome says which lines were acknowledged when a batch of n
// lines got no answer (the connection broke, the server vanished): lines
// 1..sent were; whether the batch was written cannot be told.
//
//	lines 1-40 were acknowledged; whether lines 41-50 were written is unknown
func unknownBatchOutcome(sent, n int) string {
	batch := lines{}.addRun(sent+1, sent+n)
	s := "whether " + batch.String() + " " + batch.was() + " written is unknown"
	if sent > 0 {
		yes := lines{}.addRun(1, sent)
		s = yes.String() + " " + yes.was() + " acknowledged; " + s
	}
	return s
}

// idempotentBatchOutcome says which lines were acknowledged when an
// idempotent producer's batch failed: lines 1..sent before it, and line
// sent+i+1 of the batch when acked[i]; of the others, those whose request
// the producer gave up on (unknown[i]) may or may not have been written,
// and the rest were refused, nothing of them written. At least one line of
// the batch was not acknowledged.
//
//	lines 1-40 and 42 were acknowledged, lines 41 and 43-50 were not
//	lines 1-40 were acknowledged; whether lines 41-50 were written is unknown
//	lines 1-41 were acknowledged, line 43 was not; whether line 42 was written is unknown
func idempotentBatchOutcome(sent int, acked, unknown []bool) string {
	if !slices.Contains(unknown, true) {
		return refusedBatchOutcome(sent, acked)
	}
	yes := lines{}.addRun(1, sent)
	var no, maybe lines
	for i := range acked {
		switch n := sent + i + 1; {
		case acked[i]:
			yes = yes.add(n)
		case unknown[i]:
			maybe = maybe.add(n)
		default:
			no = no.add(n)
		}
	}
	var parts []string
	switch {
	case len(yes) > 0 && len(no) > 0:
		parts = append(parts, yes.String()+" "+yes.was()+" acknowledged, "+no.String()+" "+no.was()+" not")
	case len(yes) > 0:
		parts = append(parts, yes.String()+" "+yes.was()+" acknowledged")
	case len(no) > 0:
		parts = append(parts, no.String()+" "+no.was()+" not acknowledged")
	}
	parts = append(parts, "whether "+maybe.String()+" "+maybe.was()+" written is unknown")
	return strings.Join(parts, "; ")
}

// stoppedOutcome says which lines were acknowledged when reading stdin
// failed after lines 1..sent were.
//
//	lines 1-40 were acknowledged, nothing after them was sent
func stoppedOutcome(sent int) string {
	if sent == 0 {
		return "nothing was sent"
	}
	yes := lines{}.addRun(1, sent)
	it := "them"
	if yes.one() {
		it = "it"
	}
	return yes.String() + " " + yes.was() + " acknowledged, nothing after " + it + " was sent"
}
