package log

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
// of whole, well-formed frames with offsets first, first+1, ... (a log file
// starts at 0). It never writes.
// visit, if not nil, is called for every whole record with its byte position;
// payloads are read only when visit is set. No length field makes it
// allocate more than the bytes left in the file.
func scan(path string, r io.ReaderAt, size int64, first uint64, visit func(pos int64, rec Record) error) (scanResult, error) {
	w := newWindow(r, size)
	var (
		res  scanResult
		pos  int64
		next = first
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
		hdr, err := w.at(pos, HeaderSize)
		if err != nil {
			return res, fmt.Errorf("log: scan %s at byte %d: %w", path, pos, err)
		}
		h := decodeHeader(hdr)
		if !h.consistent() {
			return res, damaged(fmt.Sprintf("record_length %d is not %d + payload_length %d", h.recordLength, HeaderSize-lengthFieldSize, h.payloadLength))
		}
		if h.offset != next {
			if next == first {
				return res, damaged(fmt.Sprintf("first offset is %d, want %d", h.offset, first))
			}
			return res, damaged(fmt.Sprintf("offset %d breaks the sequence, want %d", h.offset, next))
		}
		if int64(h.payloadLength) > left-HeaderSize {
			return res, corrupt(fmt.Sprintf("frame of %d bytes runs past the end of the file (%d bytes left)", HeaderSize+int64(h.payloadLength), left), true, io.ErrUnexpectedEOF)
		}
		if visit != nil {
			payload, err := w.copyOut(pos+HeaderSize, int(h.payloadLength))
			if err != nil {
				return res, fmt.Errorf("log: scan %s at byte %d: %w", path, pos, err)
			}
			if err := visit(pos, Record{Offset: h.offset, Timestamp: h.timestamp, Payload: payload}); err != nil {
				return res, err
			}
		}
		if len(res.positions) == cap(res.positions) {
			res.positions = slices.Grow(res.positions, indexGrowth(len(res.positions), pos, size))
		}
		res.positions = append(res.positions, pos)
		w.sparse = h.payloadLength >= sparseFrame-HeaderSize
		pos += HeaderSize + int64(h.payloadLength)
		next++
	}
}

// indexGrowth is how many index entries to add when the index of n records
// covering the first pos bytes of a size-byte file is full. After the first
// thousand records it extrapolates the count from the frames seen so far
// (plus 2 %), so that a large log's index is allocated about once, at about
// 8 bytes a record, instead of being copied at every doubling. It never
// reserves room for more frames than the bytes left could hold.
func indexGrowth(n int, pos, size int64) int {
	if n < 1024 {
		return max(n, 64)
	}
	estimate := int64(float64(size)/float64(pos)*float64(n)*1.02) + 64
	estimate = min(estimate, int64(n)+(size-pos)/HeaderSize+1)
	return max(int(estimate)-n, n/8)
}

// window is a read-ahead buffer over a file that is read front to back. It
// reads whole buffers with positional reads. After a large frame it reads
// only a small block at the next header, so the payloads of large records
// are skipped rather than read: a scan costs one read per buffer of small
// records and one small read per large one.
type window struct {
	r    io.ReaderAt
	size int64
	buf  []byte
	// start is the file position of buf[0]; n bytes of buf are valid.
	start int64
	n     int
	// sparse asks the next refill to read only sparseRead bytes.
	sparse bool
}

// sparseRead is the refill size after a frame of at least sparseFrame bytes.
const (
	sparseRead  = 4 << 10
	sparseFrame = 8 << 10
)

func newWindow(r io.ReaderAt, size int64) *window {
	return &window{r: r, size: size, buf: make([]byte, min(size, scanFirstBuffer))}
}

// scanFirstBuffer is the first buffer size; it doubles on every full refill
// up to scanBufferSize, so small logs and logs of large records never pay
// for the full buffer.
const scanFirstBuffer = 64 << 10

// at returns the n bytes at pos, which must lie within the file, refilling
// the buffer from pos when they are not buffered. n must not exceed the
// buffer. The bytes are valid until the next call.
func (w *window) at(pos int64, n int) ([]byte, error) {
	if pos < w.start || pos+int64(n) > w.start+int64(w.n) {
		if !w.sparse && w.n == len(w.buf) && len(w.buf) < scanBufferSize {
			w.buf = make([]byte, min(2*len(w.buf), scanBufferSize))
		}
		want := len(w.buf)
		if w.sparse {
			want = max(n, min(want, sparseRead))
		}
		want = int(min(int64(want), w.size-pos))
		got, err := w.r.ReadAt(w.buf[:want], pos)
		if got < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		w.start, w.n = pos, got
	}
	at := int(pos - w.start)
	return w.buf[at : at+n], nil
}

// copyOut returns a new slice holding the n bytes at pos.
func (w *window) copyOut(pos int64, n int) ([]byte, error) {
	out := make([]byte, n)
	if n <= len(w.buf) {
		b, err := w.at(pos, n)
		if err != nil {
			return nil, err
		}
		copy(out, b)
		return out, nil
	}
	if got, err := w.r.ReadAt(out, pos); got < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return out, nil
}

// allZero reports whether every byte of r in [from, to) is zero.
func allZero(r io.ReaderAt, from, to int64) (bool, error) {
	buf := make([]byte, min(to-from, 64<<10))
	for from < to {
		n := min(int64(len(buf)), to-from)
		if got, err := r.ReadAt(buf[:n], from); int64(got) < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
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
// are built on it. fn may keep the records it is given.
func ScanFile(path string, fn func(pos int64, rec Record) error) error {
	return ScanFileWithOptions(path, Options{}, fn)
}

// ScanFileWithOptions is ScanFile on the file system of opts.
func ScanFileWithOptions(path string, opts Options, fn func(pos int64, rec Record) error) error {
	return ScanFileFrom(path, 0, opts, fn)
}

// ScanFileFrom is ScanFileWithOptions for a file of frames whose offsets
// start at first rather than 0: a run of records cut from a log and kept
// elsewhere, such as the quarantine file a replica's recovery writes.
func ScanFileFrom(path string, first uint64, opts Options, fn func(pos int64, rec Record) error) error {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return err
	}
	f, err := opts.FS.OpenFile(path, os.O_RDONLY, 0)
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
	_, err = scan(path, f, info.Size(), first, fn)
	return err
}
