package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path"
	"strconv"
	"strings"
)

// The journal's format. A generation file begins with a header:
//
//	offset  size  field
//	0       4     magic "PSWJ"
//	4       1     version, 1
//	5       3     reserved, zero
//	8       8     the generation's number, as in the file's name
//
// then holds entries, each one write to a journaled file:
//
//	offset  size  field
//	0       4     n, the length of what follows the checksum
//	4       4     CRC-32C (Castagnoli) of those n bytes
//	8       1     kind: 1, a write
//	9       2     p, the length of the path
//	11      p     the file's path, relative to the journal's root, with /
//	11+p    8     the byte position the data was written at
//	19+p    n-11-p the data
//
// Every number is big-endian.
const (
	magic      = "PSWJ"
	version    = 1
	headerSize = 16

	entryHead = 8  // length and checksum
	entryMin  = 11 // kind, path length, position: what n covers besides path and data
	kindWrite = 1

	// maxPath bounds a path's length in an entry.
	maxPath = 4096
	// MaxEntryData bounds one entry's data: a write larger than this is
	// journaled as several entries.
	MaxEntryData = 64 << 20
)

// ErrDamaged means a journal file is not what the journal writes: a bad
// header, a checksum that does not match, an entry that does not parse.
var ErrDamaged = errors.New("wal: journal damaged")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendHeader appends a generation file's header.
func appendHeader(b []byte, gen uint64) []byte {
	b = append(b, magic...)
	b = append(b, version, 0, 0, 0)
	return binary.BigEndian.AppendUint64(b, gen)
}

// parseHeader checks a generation file's header against the generation
// its name gives.
func parseHeader(b []byte, gen uint64) error {
	if len(b) < headerSize {
		return fmt.Errorf("%d bytes, shorter than the %d-byte header: %w", len(b), headerSize, ErrDamaged)
	}
	if string(b[:4]) != magic {
		return fmt.Errorf("magic %q, want %q: %w", b[:4], magic, ErrDamaged)
	}
	if b[4] != version || b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return fmt.Errorf("version %d (reserved %x), want %d: %w", b[4], b[5:8], version, ErrDamaged)
	}
	if got := binary.BigEndian.Uint64(b[8:16]); got != gen {
		return fmt.Errorf("header names generation %d, the file's name %d: %w", got, gen, ErrDamaged)
	}
	return nil
}

// entry is one decoded write.
type entry struct {
	path string
	pos  int64
	data []byte
}

// appendEntry appends the entries of a write of data at pos to the file
// at rel: one, or several when data exceeds MaxEntryData.
func appendEntry(b []byte, rel string, pos int64, data []byte) []byte {
	for {
		chunk := data[:min(len(data), MaxEntryData)]
		n := entryMin + len(rel) + len(chunk)
		start := len(b)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		b = append(b, 0, 0, 0, 0)
		b = append(b, kindWrite)
		b = binary.BigEndian.AppendUint16(b, uint16(len(rel)))
		b = append(b, rel...)
		b = binary.BigEndian.AppendUint64(b, uint64(pos))
		b = append(b, chunk...)
		binary.BigEndian.PutUint32(b[start+4:], crc32.Checksum(b[start+entryHead:], castagnoli))
		data, pos = data[len(chunk):], pos+int64(len(chunk))
		if len(data) == 0 {
			return b
		}
	}
}

// decodeEntry decodes the entry at the start of b and returns it with
// its length in bytes. The entry's data aliases b.
func decodeEntry(b []byte) (entry, int, error) {
	if len(b) < entryHead {
		return entry{}, 0, fmt.Errorf("%d bytes, too short for an entry: %w", len(b), ErrDamaged)
	}
	n := int(binary.BigEndian.Uint32(b))
	if n < entryMin || n > entryMin+maxPath+MaxEntryData {
		return entry{}, 0, fmt.Errorf("entry length %d: %w", n, ErrDamaged)
	}
	if len(b)-entryHead < n {
		return entry{}, 0, fmt.Errorf("entry of %d bytes, %d left: %w", n, len(b)-entryHead, ErrDamaged)
	}
	body := b[entryHead : entryHead+n]
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(b[4:]); got != want {
		return entry{}, 0, fmt.Errorf("entry checksum %08x, want %08x: %w", got, want, ErrDamaged)
	}
	if body[0] != kindWrite {
		return entry{}, 0, fmt.Errorf("entry kind %d: %w", body[0], ErrDamaged)
	}
	p := int(binary.BigEndian.Uint16(body[1:]))
	if p == 0 || p > maxPath || 3+p+8 > n {
		return entry{}, 0, fmt.Errorf("path length %d in an entry of %d bytes: %w", p, n, ErrDamaged)
	}
	rel := string(body[3 : 3+p])
	if !validRel(rel) {
		return entry{}, 0, fmt.Errorf("path %q: %w", rel, ErrDamaged)
	}
	pos := binary.BigEndian.Uint64(body[3+p:])
	data := body[3+p+8:]
	if pos > 1<<62 || pos+uint64(len(data)) > 1<<62 {
		return entry{}, 0, fmt.Errorf("position %d: %w", pos, ErrDamaged)
	}
	return entry{path: rel, pos: int64(pos), data: data}, entryHead + n, nil
}

// validRel reports whether rel is a clean relative slash path that stays
// inside the root and names something below it, not the root itself.
func validRel(rel string) bool {
	return rel != "" && rel != "." && rel == path.Clean(rel) && !path.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, "../") &&
		!strings.ContainsRune(rel, 0) && !strings.ContainsRune(rel, '\\')
}

// genSuffix ends every generation file's name.
const genSuffix = ".wal"

// GenerationFileName is the name of generation gen's file: its number in
// 20 digits, so that names sort as numbers do.
func GenerationFileName(gen uint64) string { return fmt.Sprintf("%020d%s", gen, genSuffix) }

// ParseGenerationFileName is the inverse of GenerationFileName.
func ParseGenerationFileName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, genSuffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	gen, err := strconv.ParseUint(digits, 10, 64)
	return gen, err == nil
}
