package verify

import (
	"errors"
	"iter"

	"github.com/pystream/pystream/log"
)

// errStopScan ends a scan early when a consumer of records stops pulling;
// it never leaves this package.
var errStopScan = errors.New("verify: stop scan")

// logResult is what scanning one log file found.
type logResult struct {
	// exists is false when there is no file at the path.
	exists bool
	// records and bytes count the whole records and their frames.
	records uint64
	bytes   int64
	// err is the *log.CorruptionError or I/O error that stopped the scan.
	err error
}

// scanLog reads the log at path to its end or its first damage. It never
// writes.
func scanLog(path string) logResult {
	res := logResult{exists: true}
	res.err = log.ScanFile(path, func(pos int64, rec log.Record) error {
		res.records++
		res.bytes = pos + int64(log.FrameSize(len(rec.Payload)))
		return nil
	})
	return res
}

// records yields the records of the log at path. A scan error, if any, is
// stored in *errp once the sequence ends.
func records(path string, errp *error) iter.Seq[log.Record] {
	return func(yield func(log.Record) bool) {
		err := log.ScanFile(path, func(_ int64, r log.Record) error {
			if !yield(r) {
				return errStopScan
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopScan) {
			*errp = err
		}
	}
}
