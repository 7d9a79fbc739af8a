package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

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

// errDecompressedTooLarge is a batch that would decompress past the
// limit.
var errDecompressedTooLarge = errors.New("decompressed records above the limit")

// zstdDecoder decodes every zstd batch; DecodeAll is safe for concurrent
// use. Its memory bound is the largest limit decompress is called with.
var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true),
	zstd.WithDecoderMaxMemory(maxDecompressedBytes))

// maxDecompressedBytes caps what one batch decompresses to, whatever the
// request limit.
const maxDecompressedBytes = 64 << 20

// decompress returns src decoded with codec, at most max bytes.
func decompress(codec int, src []byte, max int) ([]byte, error) {
	max = min(max, maxDecompressedBytes)
	switch codec {
	case codecNone:
		return src, nil
	case codecGzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		return readBounded(zr, max)
	case codecSnappy:
		return unsnappy(src, max)
	case codecLz4:
		return readBounded(lz4.NewReader(bytes.NewReader(src)), max)
	case codecZstd:
		out, err := zstdDecoder.DecodeAll(src, nil)
		if err != nil {
			return nil, err
		}
		if len(out) > max {
			return nil, errDecompressedTooLarge
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown compression codec %d", codec)
}

// readBounded reads r to its end, failing past max bytes.
func readBounded(r io.Reader, max int) ([]byte, error) {
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(max) {
		return nil, errDecompressedTooLarge
	}
	return out.Bytes(), nil
}

// xerialMagic starts the snappy framing of the Java client: a 16-byte
// header, then blocks of a big-endian length and a raw snappy block.
var xerialMagic = []byte{130, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// unsnappy decodes raw snappy or the Java client's xerial framing.
func unsnappy(src []byte, max int) ([]byte, error) {
	if len(src) < 16 || !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlock(nil, src, max)
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
		if out, err = snappyBlock(out, rest[:n], max-len(out)); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return out, nil
}

// snappyBlock appends one raw snappy block's bytes to dst, checking the
// length it claims before decoding.
func snappyBlock(dst, src []byte, max int) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, errDecompressedTooLarge
	}
	out, err := s2.Decode(nil, src)
	if err != nil {
		return nil, err
	}
	return append(dst, out...), nil
}
