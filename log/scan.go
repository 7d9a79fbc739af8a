package log

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pystream/pystream/log/durable"
)

// scanBufferSize is the read-ahead used when a log is scanned on open.
const scanBufferSize = 1 << 20

// scanResult is what a scan learns about a log file.
type scanResult struct {
	// positions[i] is the byte position of the frame of offset i.
	positions []int64
	// end is the byte position just past the last whole record.
	end int64
}

// scan reads a log file front to back and checks that it is a contiguous run
// of whole, well-formed frames with offsets 0, 1, 2, .... It never writes.
// visit, if not nil, is called for every whole record with its byte position;
// payloads are read only when visit is set.
func scan(path string, r io.ReaderAt, size int64, visit func(pos int64, rec Record) error) (scanResult, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), scanBufferSize)
	var (
		res  scanResult
		pos  int64
		next uint64
		hdr  [HeaderSize]byte
	)
	corrupt := func(reason string, torn bool, cause error) error {
		return &CorruptionError{Path: path, Pos: pos, Offset: next, OffsetKnown: true, Reason: reason, TornTail: torn, Err: cause}
	}
	// damaged reports damage at pos, which is still a torn tail when every
	// byte from pos to the end of the file is zero (a file system that
	// extended the file before the data landed).
	damaged := func(reason string) error {
		zero, err := allZero(r, pos, size)
		if err != nil {
			return fmt.Errorf("log: scan %s: %w", path, err)
		}
		if zero {
			return corrupt(fmt.Sprintf("all-zero tail of %d bytes", size-pos), true, nil)
		}
		return corrupt(reason, false, nil)
	}
	for {
		left := size - pos
		if left == 0 {
			res.end = pos
			return res, nil
		}
		if left < HeaderSize {
			return res, corrupt(fmt.Sprintf("partial header: %d of %d bytes", left, HeaderSize), true, io.ErrUnexpectedEOF)
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return res, fmt.Errorf("log: scan %s at byte %d: %w", path, pos, err)
		}
		h := decodeHeader(hdr[:])
		if !h.consistent() {
			return res, damaged(fmt.Sprintf("record_length %d is not %d + payload_length %d", h.recordLength, HeaderSize-lengthFieldSize, h.payloadLength))
		}
		if h.offset != next {
			if next == 0 {
				return res, damaged(fmt.Sprintf("first offset is %d, want 0", h.offset))
			}
			return res, damaged(fmt.Sprintf("offset %d breaks the sequence, want %d", h.offset, next))
		}
		if int64(h.payloadLength) > left-HeaderSize {
			return res, corrupt(fmt.Sprintf("frame of %d bytes runs past the end of the file (%d bytes left)", HeaderSize+int64(h.payloadLength), left), true, io.ErrUnexpectedEOF)
		}
		if visit != nil {
			payload := make([]byte, h.payloadLength)
			if _, err := io.ReadFull(br, payload); err != nil {
				return res, fmt.Errorf("log: scan %s at byte %d: %w", path, pos, err)
			}
			if err := visit(pos, Record{Offset: h.offset, Timestamp: h.timestamp, Payload: payload}); err != nil {
				return res, err
			}
		} else if _, err := br.Discard(int(h.payloadLength)); err != nil {
			return res, fmt.Errorf("log: scan %s at byte %d: %w", path, pos, err)
		}
		res.positions = append(res.positions, pos)
		pos += HeaderSize + int64(h.payloadLength)
		next++
	}
}

// allZero reports whether every byte of r in [from, to) is zero.
func allZero(r io.ReaderAt, from, to int64) (bool, error) {
	buf := make([]byte, min(to-from, 64<<10))
	for from < to {
		n := min(int64(len(buf)), to-from)
		if _, err := r.ReadAt(buf[:n], from); err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		for _, b := range buf[:n] {
			if b != 0 {
				return false, nil
			}
		}
		from += n
	}
	return true, nil
}

// ScanFile reads the log file at path without changing it and calls fn for
// every whole record, in order, with the byte position of its frame. It
// stops at the first damaged frame and returns a *CorruptionError describing
// it, or the first error fn returns. Tools such as a log dumper and verifier
// are built on it.
func ScanFile(path string, fn func(pos int64, rec Record) error) error {
	return scanFileFS(durable.OS, path, fn)
}

func scanFileFS(fsys durable.FS, path string, fn func(pos int64, rec Record) error) error {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("log: scan: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("log: scan: %w", err)
	}
	if fn == nil {
		fn = func(int64, Record) error { return nil }
	}
	_, err = scan(path, f, info.Size(), fn)
	return err
}
