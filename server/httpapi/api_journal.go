package httpapi

import (
	"net/http"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
)

// Limits of GET /api/journal.
const (
	// DefaultJournalMax is the number of entries a journal read returns at
	// most when the request says nothing.
	DefaultJournalMax = 100
	// MaxJournalEntries is the largest max a journal read accepts.
	MaxJournalEntries = 1000
)

// handleJournal answers GET /api/journal?since=N&max=M: up to M entries
// (default DefaultJournalMax, 1 to MaxJournalEntries) of the cluster
// journal from offset N (default 0), oldest first, and the offset to ask
// for next.
func (a *API) handleJournal(w http.ResponseWriter, r *http.Request) {
	since, max, ae := journalQuery(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	entries, err := a.ops.Journal(since, max)
	if err != nil {
		writeAPIError(w, a.opError("read the journal", err))
		return
	}
	out := apiclient.JournalResponse{Entries: make([]apiclient.JournalEntry, len(entries)), Next: since}
	for i, e := range entries {
		je := journalEntry(e)
		// The cluster already writes paths relative to its root; this
		// keeps any absolute one that slipped into a text out of the
		// answer.
		je.Summary, je.Reason, je.Error = a.relativePaths(je.Summary), a.relativePaths(je.Reason), a.relativePaths(je.Error)
		out.Entries[i] = je
		out.Next = e.Offset + 1
	}
	writeJSON(w, http.StatusOK, out)
}

// journalQuery reads since and max strictly: decimal digits, max from 1 to
// MaxJournalEntries, no other parameter.
func journalQuery(r *http.Request) (since uint64, max int, ae *apiError) {
	q, ae := queryParams(r, "since", "max")
	if ae != nil {
		return 0, 0, ae
	}
	max = DefaultJournalMax
	if v, ok := q["since"]; ok {
		n, ok := parseUint(v, ^uint64(0))
		if !ok {
			return 0, 0, badRequest("since %s: a decimal integer from 0, the journal offset to start at", quoted(v))
		}
		since = n
	}
	if v, ok := q["max"]; ok {
		n, ok := parseUint(v, MaxJournalEntries)
		if !ok || n < 1 {
			return 0, 0, badRequest("max %s: a decimal integer from 1 to %d", quoted(v), MaxJournalEntries)
		}
		max = int(n)
	}
	return since, max, nil
}

// journalEntry converts a journal entry to the wire shape. Its paths are
// already relative to the data directory (the cluster writes them so).
func journalEntry(e cluster.JournalEntry) apiclient.JournalEntry {
	out := apiclient.JournalEntry{
		Offset: e.Offset, Time: e.Time.UTC().Format(time.RFC3339Nano),
		Event: string(e.Event), Phase: string(e.Phase), By: e.By,
		Topic: e.Topic, Broker: e.Broker, Summary: e.Summary, Reason: e.Reason,
		Quarantine: e.Quarantine, Error: e.Error, ConfigBefore: e.ConfigBefore, ConfigAfter: e.ConfigAfter,
	}
	if e.Topic != "" && e.Event != cluster.EventDeleteTopic && e.Event != cluster.EventAlterConfig {
		p := e.Partition
		out.Partition = &p
	}
	if e.Intent != nil {
		intent := *e.Intent
		out.Intent = &intent
	}
	for _, c := range e.Candidates {
		out.Candidates = append(out.Candidates, apiclient.JournalCandidate{Broker: c.Broker, LogEnd: c.LogEnd})
	}
	if e.Automatic != nil {
		on := *e.Automatic
		out.Automatic = &on
	}
	if e.Cut != nil {
		out.Cut = &apiclient.JournalCut{From: e.Cut.From, To: e.Cut.To}
	}
	for _, r := range e.Removed {
		out.Removed = append(out.Removed, apiclient.RemovedSegment{Broker: r.Broker, Base: r.Base, Next: r.Next})
	}
	return out
}
