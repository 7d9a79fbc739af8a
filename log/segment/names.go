package segment

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pystream/pystream/log"
)

// The files of a segmented log's directory.
const (
	// segmentSuffix and sidecarSuffix follow the 20-digit base offset.
	segmentSuffix = ".log"
	sidecarSuffix = ".index"
	// StartFileName holds a log start raised above the first segment's
	// base (AdvanceStart inside a segment, ResetTo).
	StartFileName = "log.start"
	// LegacyFileName is phase 1's single log file (log.FileName),
	// renamed to the first segment by Open.
	LegacyFileName = log.FileName
	// baseDigits is the width of the base offset in file names: every
	// uint64 fits, and names sort as their offsets do.
	baseDigits = 20
)

// SegmentFileName is the name of the segment whose first offset is base:
// the base in 20 decimal digits and ".log", e.g. 00000000000000000000.log.
func SegmentFileName(base uint64) string { return fileName(base, segmentSuffix) }

// SidecarFileName is the name of the sidecar of the segment whose first
// offset is base, e.g. 00000000000000000000.index.
func SidecarFileName(base uint64) string { return fileName(base, sidecarSuffix) }

// ParseSegmentFileName is the inverse of SegmentFileName; ok is false for
// any other name.
func ParseSegmentFileName(name string) (base uint64, ok bool) {
	return parseName(name, segmentSuffix)
}

// ParseSidecarFileName is the inverse of SidecarFileName.
func ParseSidecarFileName(name string) (base uint64, ok bool) {
	return parseName(name, sidecarSuffix)
}

func fileName(base uint64, suffix string) string {
	return fmt.Sprintf("%0*d%s", baseDigits, base, suffix)
}

func parseName(name, suffix string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, suffix)
	if !ok || len(digits) != baseDigits {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	base, err := strconv.ParseUint(digits, 10, 64)
	return base, err == nil
}
