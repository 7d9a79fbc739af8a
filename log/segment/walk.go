package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/pystream/pystream/log"
)

// Sealed segments are read here without package log: a sealed segment is
// not a log.Log (its 8-byte-per-record index is what sealing gives up), so
// its frames are walked header by header. The frame is phase 1's
// (log.AppendFrame); only the 24-byte header is decoded, payloads are
// skipped.

// frameHeader is the decoded header of one frame.
type frameHeader struct {
	offset     uint64
	timestamp  int64
	payloadLen uint32
}

// frameSize is the bytes the whole frame takes.
func (h frameHeader) frameSize() int64 { return log.HeaderSize + int64(h.payloadLen) }

// decodeFrameHeader decodes the header at the start of b (at least
// log.HeaderSize bytes) and reports whether its two length fields agree.
func decodeFrameHeader(b []byte) (frameHeader, bool) {
	recordLen := binary.BigEndian.Uint32(b[0:4])
	h := frameHeader{
		offset:     binary.BigEndian.Uint64(b[4:12]),
		timestamp:  int64(binary.BigEndian.Uint64(b[12:20])),
		payloadLen: binary.BigEndian.Uint32(b[20:24]),
	}
	return h, uint64(recordLen) == uint64(log.HeaderSize-4)+uint64(h.payloadLen)
}

// walkBuffer is the read-ahead of a header walk.
const walkBuffer = 1 << 20

// walkHeaders reads the frames of a segment file from byte pos, whose frame
// must have offset off, to the end of the file (size bytes), and calls fn
// for each until fn returns false. Any frame that is not whole, consistent
// and next in the sequence is a *log.CorruptionError naming path; in a
// sealed segment nothing is a torn tail.
func walkHeaders(path string, r io.ReaderAt, size, pos int64, off uint64, fn func(pos int64, h frameHeader) bool) error {
	buf := make([]byte, min(size-pos, walkBuffer))
	var bufStart, bufLen int64
	corrupt := func(reason string) error {
		return &log.CorruptionError{Path: path, Pos: pos, Offset: off, OffsetKnown: true, Reason: reason}
	}
	for pos < size {
		if size-pos < log.HeaderSize {
			return corrupt(fmt.Sprintf("partial header of %d bytes in a sealed segment", size-pos))
		}
		if pos < bufStart || pos+log.HeaderSize > bufStart+bufLen {
			n := min(int64(len(buf)), size-pos)
			got, err := r.ReadAt(buf[:n], pos)
			if int64(got) < log.HeaderSize {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("segment: read %s at byte %d: %w", path, pos, err)
			}
			bufStart, bufLen = pos, int64(got)
		}
		h, ok := decodeFrameHeader(buf[pos-bufStart:])
		switch {
		case !ok:
			return corrupt("record_length and payload_length disagree")
		case h.offset != off:
			return corrupt(fmt.Sprintf("offset %d breaks the sequence, want %d", h.offset, off))
		case h.frameSize() > size-pos:
			return corrupt(fmt.Sprintf("frame of %d bytes runs past the end of a sealed segment (%d bytes left)", h.frameSize(), size-pos))
		}
		if !fn(pos, h) {
			return nil
		}
		pos += h.frameSize()
		off++
	}
	return nil
}

// buildSidecar reads a whole segment file once and returns its sidecar:
// an index entry for the first frame and then for the first frame at least
// interval bytes past the previous entry. Positions and relative offsets
// beyond 32 bits get no entry (a segment of more than 4 GiB, possible only
// through a single huge batch, is indexed up to there). maxTS is
// math.MinInt64 for an empty file.
func buildSidecar(path string, r io.ReaderAt, size int64, base uint64, interval int) (*sidecar, error) {
	s := &sidecar{base: base, size: size, maxTS: math.MinInt64, interval: uint32(interval)}
	nextEntry := int64(0)
	err := walkHeaders(path, r, size, 0, base, func(pos int64, h frameHeader) bool {
		s.maxTS = max(s.maxTS, h.timestamp)
		rel := h.offset - base
		if pos >= nextEntry && pos <= math.MaxUint32 && rel <= math.MaxUint32 {
			s.entries = append(s.entries, indexEntry{rel: uint32(rel), pos: uint32(pos), maxTS: s.maxTS})
			nextEntry = pos + int64(interval)
		}
		s.count++
		return true
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
