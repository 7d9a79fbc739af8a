package segment

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// The sidecar of a sealed segment, all integers big-endian (doc.go § The
// sidecar):
//
//	magic          4 bytes  "PSSX"
//	version        uint8    1
//	reserved       3 bytes  zero
//	base           uint64   the segment's first offset
//	count          uint64   records in the segment
//	last           uint64   base + count - 1 (0 when count is 0)
//	max_timestamp  int64    largest timestamp in the segment
//	size           int64    bytes of the segment file
//	interval       uint32   the IndexInterval it was built with
//	entries        uint32   n
//	header_crc     uint32   CRC-32C (Castagnoli) of the 56 bytes above
//	n entries of 16 bytes:
//	  rel_offset   uint32   offset - base of an indexed record
//	  position     uint32   byte position of its frame
//	  max_ts       int64    largest timestamp of the records up to and
//	                        including it
//	crc            uint32   CRC-32C (Castagnoli) of every byte before it
//
// The header has its own checksum so that Open can trust a sealed
// segment's numbers from its first 60 bytes alone; the sparse index is
// read, checked against the final checksum and thinned when the segment is
// first read (sealedSegment.index). encodeSidecar, parseSidecarHeader and
// parseSidecar are the whole format.
const (
	sidecarMagic      = "PSSX"
	sidecarVersion    = 1
	sidecarHeaderSize = 56
	sidecarEntrySize  = 16
	sidecarCRCSize    = 4
	// sidecarHeadSize is the header with its checksum: what Open reads.
	sidecarHeadSize = sidecarHeaderSize + sidecarCRCSize
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sidecar is the decoded sidecar of one sealed segment.
type sidecar struct {
	base     uint64
	count    uint64
	maxTS    int64
	size     int64
	interval uint32
	entries  []indexEntry
}

// indexEntry is one entry of a sidecar's sparse index.
type indexEntry struct {
	rel   uint32
	pos   uint32
	maxTS int64
}

// next is one past the segment's last offset.
func (s *sidecar) next() uint64 { return s.base + s.count }

// encodeSidecar appends the encoding of s to dst.
func encodeSidecar(dst []byte, s *sidecar) []byte {
	start := len(dst)
	dst = append(dst, sidecarMagic...)
	dst = append(dst, sidecarVersion, 0, 0, 0)
	dst = binary.BigEndian.AppendUint64(dst, s.base)
	dst = binary.BigEndian.AppendUint64(dst, s.count)
	var last uint64
	if s.count > 0 {
		last = s.base + s.count - 1
	}
	dst = binary.BigEndian.AppendUint64(dst, last)
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.maxTS))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.size))
	dst = binary.BigEndian.AppendUint32(dst, s.interval)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s.entries)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	for _, e := range s.entries {
		dst = binary.BigEndian.AppendUint32(dst, e.rel)
		dst = binary.BigEndian.AppendUint32(dst, e.pos)
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.maxTS))
	}
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// sidecarLimit is the largest sidecar a segment of size bytes can have: one
// entry per frame at most, and a frame is at least a header.
func sidecarLimit(size int64) int64 {
	return sidecarHeadSize + sidecarCRCSize + sidecarEntrySize*(size/24+1)
}

// parseSidecarHeader decodes and checks the first sidecarHeadSize bytes of
// a sidecar: every number but the index entries, and how many entries
// follow. Every refusal wraps ErrSidecar; it never panics.
func parseSidecarHeader(b []byte) (*sidecar, uint32, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrSidecar, fmt.Sprintf(format, args...))
	}
	if len(b) < sidecarHeadSize {
		return nil, 0, bad("%d bytes, shorter than a header", len(b))
	}
	if string(b[:4]) != sidecarMagic {
		return nil, 0, bad("bad magic %q", b[:4])
	}
	if b[4] != sidecarVersion {
		return nil, 0, bad("version %d, want %d", b[4], sidecarVersion)
	}
	if got, want := binary.BigEndian.Uint32(b[sidecarHeaderSize:]), crc32.Checksum(b[:sidecarHeaderSize], castagnoli); got != want {
		return nil, 0, bad("header checksum %08x, want %08x", got, want)
	}
	if b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return nil, 0, bad("reserved bytes not zero")
	}
	s := &sidecar{
		base:     binary.BigEndian.Uint64(b[8:]),
		count:    binary.BigEndian.Uint64(b[16:]),
		maxTS:    int64(binary.BigEndian.Uint64(b[32:])),
		size:     int64(binary.BigEndian.Uint64(b[40:])),
		interval: binary.BigEndian.Uint32(b[48:]),
	}
	last := binary.BigEndian.Uint64(b[24:])
	n := binary.BigEndian.Uint32(b[52:])
	switch {
	case s.size < 0:
		return nil, 0, bad("negative size %d", s.size)
	case s.count > math.MaxUint64-s.base:
		return nil, 0, bad("count %d overflows from base %d", s.count, s.base)
	case s.count == 0 && (last != 0 || n != 0):
		return nil, 0, bad("empty segment with a last offset or entries")
	case s.count > 0 && last != s.base+s.count-1:
		return nil, 0, bad("last offset %d, want base %d + count %d - 1", last, s.base, s.count)
	case s.count > 0 && n == 0:
		return nil, 0, bad("no index entries for %d records", s.count)
	case uint64(s.size) < s.count*24:
		return nil, 0, bad("%d records cannot fit in %d bytes", s.count, s.size)
	case uint64(n) > s.count:
		return nil, 0, bad("%d index entries for %d records", n, s.count)
	}
	return s, n, nil
}

// sidecarSize is the length of a sidecar with n index entries.
func sidecarSize(n uint32) int64 {
	return sidecarHeadSize + int64(n)*sidecarEntrySize + sidecarCRCSize
}

// parseSidecar decodes and checks a whole sidecar. Every refusal wraps
// ErrSidecar; it never panics and never allocates more than len(b) allows.
func parseSidecar(b []byte) (*sidecar, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrSidecar, fmt.Sprintf(format, args...))
	}
	s, n, err := parseSidecarHeader(b)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != sidecarSize(n) {
		return nil, bad("%d bytes, %d entries need %d", len(b), n, sidecarSize(n))
	}
	body := b[:len(b)-sidecarCRCSize]
	if got, want := binary.BigEndian.Uint32(b[len(body):]), crc32.Checksum(body, castagnoli); got != want {
		return nil, bad("checksum %08x, want %08x", got, want)
	}
	s.entries = make([]indexEntry, n)
	for i := range s.entries {
		at := sidecarHeadSize + i*sidecarEntrySize
		e := indexEntry{
			rel:   binary.BigEndian.Uint32(b[at:]),
			pos:   binary.BigEndian.Uint32(b[at+4:]),
			maxTS: int64(binary.BigEndian.Uint64(b[at+8:])),
		}
		if i == 0 {
			if e.rel != 0 || e.pos != 0 {
				return nil, bad("first entry (%d, %d) is not the first record", e.rel, e.pos)
			}
		} else if p := s.entries[i-1]; e.rel <= p.rel || e.pos <= p.pos || e.maxTS < p.maxTS {
			return nil, bad("entry %d (%d, %d, %d) does not follow (%d, %d, %d)", i, e.rel, e.pos, e.maxTS, p.rel, p.pos, p.maxTS)
		}
		if uint64(e.rel) >= s.count || int64(e.pos) >= s.size || e.maxTS > s.maxTS {
			return nil, bad("entry %d (%d, %d, %d) outside the segment", i, e.rel, e.pos, e.maxTS)
		}
		s.entries[i] = e
	}
	return s, nil
}
