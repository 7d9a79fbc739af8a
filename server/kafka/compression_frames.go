package kafka

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// zstdWindow is the largest window the zstd frames of src declare — for a
// frame of one segment, its content size, the history the decoder takes
// for it — read from the frames' headers and block headers without
// decoding any block. A window above MaxZstdWindow is errWindowTooLarge;
// frames that do not parse are errFraming (the decoder would refuse them
// too).
//
// Format: RFC 8878 § 3.1 — a frame is a header, blocks of a 3-byte header
// (last-block bit, type, size) and their content (one byte for an RLE
// block), and a 4-byte checksum when the header says so; skippable frames
// carry their length.
func zstdWindow(src []byte) (int64, error) {
	var most uint64
	for rest := src; len(rest) > 0; {
		var h zstd.Header
		if err := h.Decode(rest); err != nil {
			return 0, fmt.Errorf("%w: zstd frame header at byte %d: %w", errFraming, len(src)-len(rest), err)
		}
		if h.Skippable {
			n := uint64(h.HeaderSize) + uint64(h.SkippableSize)
			if n > uint64(len(rest)) {
				return 0, fmt.Errorf("%w: zstd skippable frame of %d bytes with %d left", errFraming, n, len(rest))
			}
			rest = rest[n:]
			continue
		}
		window := h.WindowSize
		if h.SingleSegment {
			window = max(h.FrameContentSize, zstd.MinWindowSize)
		}
		if window > MaxZstdWindow {
			return 0, fmt.Errorf("%w: a frame declares %d bytes, at most %d", errWindowTooLarge, window, MaxZstdWindow)
		}
		most = max(most, window)
		rest = rest[h.HeaderSize:]
		for last := false; !last; {
			if len(rest) < 3 {
				return 0, fmt.Errorf("%w: zstd block header cut short", errFraming)
			}
			bh := uint32(rest[0]) | uint32(rest[1])<<8 | uint32(rest[2])<<16
			rest = rest[3:]
			last = bh&1 != 0
			size := int(bh >> 3)
			switch (bh >> 1) & 3 {
			case 1: // RLE: one byte repeated size times
				size = 1
			case 3:
				return 0, fmt.Errorf("%w: reserved zstd block type", errFraming)
			}
			if size > len(rest) {
				return 0, fmt.Errorf("%w: zstd block of %d bytes with %d left", errFraming, size, len(rest))
			}
			rest = rest[size:]
		}
		if h.HasCheckSum {
			if len(rest) < 4 {
				return 0, fmt.Errorf("%w: zstd checksum cut short", errFraming)
			}
			rest = rest[4:]
		}
	}
	return int64(most), nil
}

// The magic numbers of lz4 frames (little-endian), LZ4 Frame Format § General
// structure.
const (
	lz4Magic          = 0x184D2204
	lz4LegacyMagic    = 0x184C2102
	lz4SkippableMagic = 0x184D2A50 // the low four bits are free
)

// lz4BlockSize is the largest block size the lz4 frames of src declare (64
// KiB to 4 MiB), the buffers the reader takes for them, read from the
// frames' descriptors and block sizes without decoding any block. Legacy
// frames (8 MiB blocks, never written by a Kafka client) and frames that
// do not parse are errFraming.
func lz4BlockSize(src []byte) (int64, error) {
	var most int64
	for rest := src; len(rest) > 0; {
		if len(rest) < 4 {
			return 0, fmt.Errorf("%w: lz4 magic cut short", errFraming)
		}
		magic := binary.LittleEndian.Uint32(rest)
		switch {
		case magic&^0xF == lz4SkippableMagic:
			if len(rest) < 8 || uint64(binary.LittleEndian.Uint32(rest[4:])) > uint64(len(rest)-8) {
				return 0, fmt.Errorf("%w: lz4 skippable frame cut short", errFraming)
			}
			rest = rest[8+binary.LittleEndian.Uint32(rest[4:]):]
			continue
		case magic == lz4LegacyMagic:
			return 0, fmt.Errorf("%w: legacy lz4 frame", errFraming)
		case magic != lz4Magic:
			return 0, fmt.Errorf("%w: lz4 magic %08x", errFraming, magic)
		}
		if len(rest) < 7 {
			return 0, fmt.Errorf("%w: lz4 frame descriptor cut short", errFraming)
		}
		flg, bd := rest[4], rest[5]
		id := (bd >> 4) & 7
		if flg>>6 != 1 || id < 4 {
			return 0, fmt.Errorf("%w: lz4 frame version %d, block size id %d", errFraming, flg>>6, id)
		}
		most = max(most, int64(1)<<(8+2*id)) // 4: 64 KiB .. 7: 4 MiB
		header := 7
		if flg&0x08 != 0 { // content size
			header += 8
		}
		if flg&0x01 != 0 { // dictionary id
			header += 4
		}
		if len(rest) < header {
			return 0, fmt.Errorf("%w: lz4 frame descriptor cut short", errFraming)
		}
		rest = rest[header:]
		for {
			if len(rest) < 4 {
				return 0, fmt.Errorf("%w: lz4 block size cut short", errFraming)
			}
			word := binary.LittleEndian.Uint32(rest)
			rest = rest[4:]
			if word == 0 { // the end mark
				break
			}
			size := uint64(word &^ (1 << 31)) // the high bit: stored uncompressed
			if flg&0x10 != 0 {                // block checksum
				size += 4
			}
			if size > uint64(len(rest)) {
				return 0, fmt.Errorf("%w: lz4 block of %d bytes with %d left", errFraming, size, len(rest))
			}
			rest = rest[size:]
		}
		if flg&0x04 != 0 { // content checksum
			if len(rest) < 4 {
				return 0, fmt.Errorf("%w: lz4 content checksum cut short", errFraming)
			}
			rest = rest[4:]
		}
	}
	return most, nil
}
