package segment

import "errors"

// Sentinel errors. Every error the package returns wraps one of these, one
// of package log's (log.ErrInvalidArgument, log.ErrClosed, log.ErrFailed,
// log.ErrPayloadTooLarge, log.ErrOffsetMismatch), or is a
// *log.CorruptionError naming the damaged file; check them with errors.Is
// and errors.As.
var (
	// ErrBeforeLogStart is returned by Read for an offset below LogStart:
	// the record was deleted by retention, or lies below the start a
	// follower was reset to.
	ErrBeforeLogStart = errors.New("segment: offset before the log start")
	// ErrSidecar is wrapped by the sidecar parser for a sidecar that is
	// not a whole, checksummed sidecar of its segment. Open rebuilds such a
	// sidecar from its segment and reports it (Rebuilt, Options.Logf).
	ErrSidecar = errors.New("segment: damaged sidecar")
)
