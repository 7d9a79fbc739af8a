package httpapi

import (
	"errors"
	"io/fs"
	"net/http"
	"path/filepath"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/apiclient"
)

// errEnough stops a quarantine file's scan once the answer is full;
// errPastName at a record past the offsets the file's name gives.
var (
	errEnough   = errors.New("answer full")
	errPastName = errors.New("a record past the file's name")
)

// handleQuarantine answers GET /api/journal/{entry}/quarantine
// ?offset=N&max=M&max_bytes=B: the records a recovery cut from a replica
// and kept in the quarantine file that journal entry {entry} names, from
// offset N (default: the first it keeps), M and B bounded as a fetch's
// are. Only the journal names the file: a client never gives a path.
func (a *API) handleQuarantine(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("entry")
	entry, ok := parseUint(raw, ^uint64(0))
	if !ok {
		writeAPIError(w, badRequest("journal entry %s: a decimal integer from 0", quoted(raw)))
		return
	}
	q, ae := a.fetchQuery(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	entries, err := a.ops.Journal(entry, 1)
	if err != nil {
		writeAPIError(w, a.opError("read the journal", err))
		return
	}
	if len(entries) == 0 || entries[0].Offset != entry {
		writeAPIError(w, notFound("journal entry %d does not exist", entry))
		return
	}
	e := entries[0]
	if e.Quarantine == "" {
		writeAPIError(w, notFound("journal entry %d names no quarantine file: only a recovery that cut records keeps them in one", entry))
		return
	}
	rel := filepath.FromSlash(e.Quarantine)
	from, to, _, named := cluster.ParseQuarantineName(filepath.Base(rel))
	if !named || !filepath.IsLocal(rel) {
		a.logger.Error("a journal entry names a quarantine file the server cannot read", "entry", entry, "quarantine", e.Quarantine)
		writeAPIError(w, newAPIError(http.StatusInternalServerError, CodeInternal,
			"journal entry %d names its quarantine file in a form this server cannot read; the server log has it", entry))
		return
	}
	out := apiclient.QuarantineResponse{Entry: entry, Topic: e.Topic, Partition: e.Partition, Broker: e.Broker,
		File: e.Quarantine, From: from, To: to, Records: []apiclient.FetchedRecord{}, NextOffset: max(q.offset, from)}
	budget := q.maxBytes
	err = log.ScanFileFrom(filepath.Join(a.root, rel), from, log.Options{}, func(_ int64, rec log.Record) error {
		if rec.Offset >= to {
			return errPastName
		}
		if rec.Offset < out.NextOffset {
			return nil
		}
		if len(out.Records) == q.max || budget <= 0 {
			return errEnough
		}
		out.Records = append(out.Records, fetchedRecordOf(rec))
		out.NextOffset = rec.Offset + 1
		budget -= len(rec.Payload)
		return nil
	})
	var corrupt *log.CorruptionError
	switch {
	case err == nil && out.NextOffset < to:
		// The file ends before the offset its name says it keeps to.
		a.logger.Error("a quarantine file holds fewer records than its name says", "entry", entry, "quarantine", e.Quarantine, "to", to)
		writeAPIError(w, newAPIError(http.StatusInternalServerError, CodeInternal,
			"the quarantine file of journal entry %d ends before offset %d, which its name says it keeps to; it is never changed, "+
				"and pystream log dump reads what it holds", entry, to-1))
	case errors.Is(err, errPastName):
		a.logger.Error("a quarantine file holds more records than its name says", "entry", entry, "quarantine", e.Quarantine, "to", to)
		writeAPIError(w, newAPIError(http.StatusInternalServerError, CodeInternal,
			"the quarantine file of journal entry %d holds records past offset %d, where its name says it ends; it is never changed, "+
				"and pystream log dump reads what it holds", entry, to-1))
	case err == nil || errors.Is(err, errEnough):
		writeJSON(w, http.StatusOK, out)
	case errors.Is(err, fs.ErrNotExist):
		writeAPIError(w, notFound("the quarantine file journal entry %d names is not in this server's data directory: "+
			"the recovery did not get to write it, it was removed, or broker %d's node keeps it", entry, e.Broker))
	case errors.As(err, &corrupt):
		a.logger.Error("a quarantine file is damaged", "entry", entry, "err", err)
		writeAPIError(w, newAPIError(http.StatusInternalServerError, CodeInternal,
			"the quarantine file of journal entry %d is damaged at byte %d (%s); it is never changed, "+
				"and pystream log dump reads the records before the damage", entry, corrupt.Pos, tidy(corrupt.Reason)))
	default:
		writeAPIError(w, a.opError("read a quarantine file", err))
	}
}
