package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The codecs of a record batch's attributes (bits 0-2), with the
// libraries franz-go itself uses for each: klauspost/compress for gzip,
// snappy (s2 in its snappy-compatible mode) and zstd, pierrec/lz4 for lz4.
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLz4    = 3
	codecZstd   = 4
)

var (
	// errDecompressedTooLarge is a produce request whose batches would
	// decompress past its limit (Config.MaxDecompressedBytes):
	// MESSAGE_TOO_LARGE.
	errDecompressedTooLarge = errors.New("kafka: decompressed records above the request's limit")
	// errInflightFull is a produce request whose decompressed records
	// would pass the server-wide in-flight budget
	// (Config.MaxInflightBytes): POLICY_VIOLATION.
	errInflightFull = errors.New("kafka: decompressed records would pass the server's in-flight budget")
	// errWindowTooLarge is a zstd frame whose window (or, for a frame of
	// one segment, its content size) is above MaxZstdWindow:
	// MESSAGE_TOO_LARGE, refused from its header before any of it is
	// decoded.
	errWindowTooLarge = errors.New("kafka: zstd window above the server's limit")
	// errFraming is compressed records whose frames (zstd, lz4) do not
	// parse: CORRUPT_MESSAGE.
	errFraming = errors.New("kafka: malformed compression frame")
)

// maxDecompressedBytes caps what one batch decompresses to, whatever the
// request limit.
const maxDecompressedBytes = 64 << 20

// MaxZstdWindow is the largest zstd window the Kafka port decodes: the
// history a decoder allocates whole before the frame's first block,
// whatever the frame then inflates to. 8 MiB is the window the zstd format
// asks every decoder to support, and far above what producers send:
// franz-go writes 64 KiB windows, librdkafka sizes the window to the batch,
// the Java client's default level 3 streams with 2 MiB (levels up to 19
// stay within 8 MiB). A frame whose header declares more is refused,
// MESSAGE_TOO_LARGE, before anything is decoded.
const MaxZstdWindow = 8 << 20

// zstdBlockSpace is the most one zstd block decodes to; a decoder's history
// holds its window and two blocks' room beyond it.
const zstdBlockSpace = 128<<10 + 64

// zstdPoolWindow is the largest window whose decoder goes back to the pool
// once the batch is decoded: a decoder keeps its history, so one that
// decoded a larger window is closed and its memory left to the collector
// rather than kept, uncharged, between requests.
const zstdPoolWindow = 2 << 20

// inflateChunk is how much is inflated between two charges to the budget.
const inflateChunk = 32 << 10

// inflation is the budget of one produce request's decompressed bytes:
// at most left more for the request, each byte also reserved from the
// server-wide in-flight budget until release. A bomb stops at the first
// chunk past either, never decompressed whole then checked. Safe for
// concurrent use (a request's partitions decode in parallel).
type inflation struct {
	server *budget

	// mu guards left and held.
	mu   sync.Mutex
	left int64
	held int64
}

// take charges n decompressed bytes.
func (f *inflation) take(n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if int64(n) > f.left {
		f.left = 0
		return errDecompressedTooLarge
	}
	if !f.server.tryAcquire(int64(n)) {
		return errInflightFull
	}
	f.left -= int64(n)
	f.held += int64(n)
	return nil
}

// reserve charges n bytes a decoder allocates before it decodes (a zstd
// window, lz4 block buffers) for as long as one batch decodes: to the
// server's budget, and to the request's when request is true. The
// function it returns gives them back.
func (f *inflation) reserve(n int64, request bool) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if request && n > f.left {
		return nil, errDecompressedTooLarge
	}
	if !f.server.tryAcquire(n) {
		return nil, errInflightFull
	}
	if request {
		f.left -= n
	}
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if request {
			f.left += n
		}
		f.server.release(n)
	}, nil
}

// release gives the server back what the request held.
func (f *inflation) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.server.release(f.held)
	f.held = 0
}

// zstdDecoders are streaming zstd decoders, reset for each batch; only
// those whose history is at most zstdPoolWindow come back.
var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(maxDecompressedBytes), zstd.WithDecoderMaxWindow(MaxZstdWindow))
	if err != nil {
		return err
	}
	return d
}}

// decompress returns src decoded with codec, each chunk charged to f as
// it is inflated.
func decompress(codec int, src []byte, f *inflation) ([]byte, error) {
	switch codec {
	case codecNone:
		return src, nil
	case codecGzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		return inflate(zr, f)
	case codecSnappy:
		return unsnappy(src, f)
	case codecLz4:
		block, err := lz4BlockSize(src)
		if err != nil {
			return nil, err
		}
		// The reader takes a buffer of the block size for the compressed
		// block and one for the decoded block, from pools of their
		// size. franz-go writes 4 MiB blocks: charged to the request's
		// budget too, they would take all of it and refuse every
		// franz-go producer, so they are charged to the server's alone.
		unreserve, err := f.reserve(2*block, false)
		if err != nil {
			return nil, err
		}
		defer unreserve()
		return inflate(lz4.NewReader(bytes.NewReader(src)), f)
	case codecZstd:
		window, err := zstdWindow(src)
		if err != nil {
			return nil, err
		}
		// The decoder allocates its history (the window and two
		// blocks) before the first block: charge it before decoding.
		unreserve, err := f.reserve(window+2*min(window, zstdBlockSpace), true)
		if err != nil {
			return nil, err
		}
		defer unreserve()
		v := zstdDecoders.Get()
		d, ok := v.(*zstd.Decoder)
		if !ok {
			return nil, v.(error)
		}
		defer func() {
			if window <= zstdPoolWindow {
				zstdDecoders.Put(d)
			} else {
				d.Close()
			}
		}()
		if err := d.Reset(bytes.NewReader(src)); err != nil {
			return nil, err
		}
		return inflate(d, f)
	}
	return nil, fmt.Errorf("unknown compression codec %d", codec)
}

// inflate reads r to its end, a chunk at a time, charging each chunk to f
// before it is kept, and never more than maxDecompressedBytes.
func inflate(r io.Reader, f *inflation) ([]byte, error) {
	var out []byte
	r = io.LimitReader(r, maxDecompressedBytes+1)
	for {
		if len(out) == cap(out) {
			out = append(out, make([]byte, inflateChunk)...)[:len(out)]
		}
		n, err := r.Read(out[len(out):min(cap(out), len(out)+inflateChunk)])
		if n > 0 {
			if len(out)+n > maxDecompressedBytes {
				return nil, errDecompressedTooLarge
			}
			if terr := f.take(n); terr != nil {
				return nil, terr
			}
			out = out[:len(out)+n]
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// xerialMagic starts the snappy framing of the Java client: a 16-byte
// header, then blocks of a big-endian length and a raw snappy block.
var xerialMagic = []byte{130, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// unsnappy decodes raw snappy or the Java client's xerial framing.
func unsnappy(src []byte, f *inflation) ([]byte, error) {
	if len(src) < 16 || !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlock(nil, src, f)
	}
	var out []byte
	for rest := src[16:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, errors.New("malformed xerial snappy framing")
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return nil, errors.New("malformed xerial snappy framing")
		}
		var err error
		if out, err = snappyBlock(out, rest[:n], f); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return out, nil
}

// snappyBlock appends one raw snappy block's bytes to dst, charging the
// length it claims to f before decoding.
func snappyBlock(dst, src []byte, f *inflation) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if len(dst)+n > maxDecompressedBytes {
		return nil, errDecompressedTooLarge
	}
	if err := f.take(n); err != nil {
		return nil, err
	}
	out, err := s2.Decode(nil, src)
	if err != nil {
		return nil, err
	}
	return append(dst, out...), nil
}
