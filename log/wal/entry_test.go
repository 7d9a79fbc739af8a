package wal_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/wal"
)

// rawEntry builds an entry byte by byte, with a correct checksum unless
// the caller breaks it after: kind, path and position as given.
func rawEntry(kind byte, rel string, pos uint64, data []byte) []byte {
	body := []byte{kind}
	body = binary.BigEndian.AppendUint16(body, uint16(len(rel)))
	body = append(body, rel...)
	body = binary.BigEndian.AppendUint64(body, pos)
	body = append(body, data...)
	return seal(body)
}

// seal puts the length and checksum of body in front of it.
func seal(body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return append(b, body...)
}

func TestEntryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		rel  string
		pos  int64
		data []byte
	}{
		{"empty data", "p/log.bin", 0, nil},
		{"one byte", "a", 7, []byte{0}},
		{"nested path", "topic-3/partition-12/00000000000000000042.log", 1 << 40, []byte("hello, journal")},
		{"longest path", strings.Repeat("x", wal.MaxPath), 1, []byte("y")},
		{"position at the limit", "f", 1<<62 - 3, []byte("abc")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := wal.AppendEntry([]byte("prefix"), tc.rel, tc.pos, tc.data)
			require.Equal(t, "prefix", string(b[:6]), "appendEntry appends")
			b = b[6:]
			rel, pos, data, n, err := wal.DecodeEntry(append(b, "trailing bytes"...))
			require.NoError(t, err)
			require.Equal(t, len(b), n)
			require.Equal(t, tc.rel, rel)
			require.Equal(t, tc.pos, pos)
			require.Equal(t, len(tc.data), len(data))
			require.True(t, bytes.Equal(tc.data, data))
			require.Equal(t, wal.EntryHead+wal.EntryMin+len(tc.rel)+len(tc.data), n)
		})
	}
}

// TestLargeWriteIsSplit journals a write larger than MaxEntryData: it
// becomes several entries at consecutive positions whose data joins back
// into the write.
func TestLargeWriteIsSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates twice MaxEntryData")
	}
	data := make([]byte, wal.MaxEntryData+1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b := wal.AppendEntry(nil, "p/log.bin", 100, data)
	var got []byte
	var positions []int64
	for len(b) > 0 {
		rel, pos, d, n, err := wal.DecodeEntry(b)
		require.NoError(t, err)
		require.Equal(t, "p/log.bin", rel)
		require.LessOrEqual(t, len(d), wal.MaxEntryData)
		positions = append(positions, pos)
		got = append(got, d...)
		b = b[n:]
	}
	require.Equal(t, []int64{100, 100 + wal.MaxEntryData}, positions)
	require.True(t, bytes.Equal(data, got), "the entries' data joins back into the write")
}

func TestDecodeEntryRefusesDamage(t *testing.T) {
	good := wal.AppendEntry(nil, "p/log.bin", 5, []byte("data"))
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 1
	badSum := bytes.Clone(good)
	badSum[5] ^= 0x80
	shortLen := bytes.Clone(good)
	binary.BigEndian.PutUint32(shortLen, wal.EntryMin-1)
	hugeLen := bytes.Clone(good)
	binary.BigEndian.PutUint32(hugeLen, wal.EntryMin+wal.MaxPath+wal.MaxEntryData+1)
	longerThanInput := bytes.Clone(good)
	binary.BigEndian.PutUint32(longerThanInput, uint32(len(good)-wal.EntryHead+1))

	// pathPastEnd says the path is longer than the entry holds.
	pathPastEnd := []byte{wal.KindWrite}
	pathPastEnd = binary.BigEndian.AppendUint16(pathPastEnd, 20)
	pathPastEnd = append(pathPastEnd, "abcdefgh"...) // 8 bytes where the position goes

	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"shorter than a head", good[:wal.EntryHead-1]},
		{"head only", good[:wal.EntryHead]},
		{"cut short", good[:len(good)-1]},
		{"length below the minimum", shortLen},
		{"length above the maximum", hugeLen},
		{"length past the input", longerThanInput},
		{"bad checksum of the data", badCRC},
		{"bad checksum field", badSum},
		{"kind 0", rawEntry(0, "f", 0, nil)},
		{"kind 2", rawEntry(2, "f", 0, []byte("x"))},
		{"path length 0", rawEntry(wal.KindWrite, "", 0, []byte("xy"))},
		{"path too long", rawEntry(wal.KindWrite, strings.Repeat("x", wal.MaxPath+1), 0, nil)},
		{"path past the entry", seal(pathPastEnd)},
		{"path escaping the root", rawEntry(wal.KindWrite, "../x", 0, nil)},
		{"path the parent", rawEntry(wal.KindWrite, "..", 0, nil)},
		{"path escaping after cleaning", rawEntry(wal.KindWrite, "a/../../x", 0, nil)},
		{"absolute path", rawEntry(wal.KindWrite, "/etc/passwd", 0, nil)},
		{"unclean path", rawEntry(wal.KindWrite, "a//b", 0, nil)},
		{"dot path", rawEntry(wal.KindWrite, ".", 0, nil)},
		{"path with NUL", rawEntry(wal.KindWrite, "a\x00b", 0, nil)},
		{"path with backslash", rawEntry(wal.KindWrite, `a\..\..\x`, 0, nil)},
		{"position above 2^62", rawEntry(wal.KindWrite, "f", 1<<62+1, nil)},
		{"position with sign bit", rawEntry(wal.KindWrite, "f", 1<<63, []byte("x"))},
		{"position plus data past 2^62", rawEntry(wal.KindWrite, "f", 1<<62-1, []byte("xy"))},
		{"position wrapping around", rawEntry(wal.KindWrite, "f", ^uint64(0), []byte("xy"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, n, err := wal.DecodeEntry(tc.b)
			require.ErrorIs(t, err, wal.ErrDamaged)
			require.Zero(t, n)
		})
	}
}

func TestHeader(t *testing.T) {
	good := wal.AppendHeader(nil, 42)
	require.Len(t, good, wal.HeaderSize)
	require.Equal(t, "PSWJ", string(good[:4]))
	require.NoError(t, wal.ParseHeader(good, 42))
	require.NoError(t, wal.ParseHeader(append(bytes.Clone(good), "entries"...), 42), "what follows the header is not its business")

	mutate := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		gen  uint64
	}{
		{"empty", nil, 42},
		{"short", good[:wal.HeaderSize-1], 42},
		{"bad magic", mutate(0, 'X'), 42},
		{"version 0", mutate(4, 0), 42},
		{"version 2", mutate(4, 2), 42},
		{"reserved byte 5", mutate(5, 1), 42},
		{"reserved byte 6", mutate(6, 1), 42},
		{"reserved byte 7", mutate(7, 0xff), 42},
		{"generation mismatch", good, 43},
		{"generation 0 against 42", good, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, wal.ParseHeader(tc.b, tc.gen), wal.ErrDamaged)
		})
	}
}

func TestGenerationFileName(t *testing.T) {
	for _, gen := range []uint64{0, 1, 9, 10, 12345, 1<<63 + 5, ^uint64(0)} {
		name := wal.GenerationFileName(gen)
		require.Len(t, name, 24)
		got, ok := wal.ParseGenerationFileName(name)
		require.True(t, ok, name)
		require.Equal(t, gen, got)
	}
	require.Less(t, wal.GenerationFileName(9), wal.GenerationFileName(10), "names sort as numbers do")

	for _, name := range []string{
		"",
		".wal",
		"1.wal",
		"0000000000000000001.wal",    // 19 digits
		"000000000000000000001.wal",  // 21 digits
		"00000000000000000001",       // no suffix
		"00000000000000000001.wal.x", // more after the suffix
		"00000000000000000001.WAL",
		"0000000000000000000a.wal",
		"+0000000000000000001.wal",
		"-0000000000000000001.wal",
		"99999999999999999999.wal", // above 2^64-1
		"00000000000000000001.wal" + wal.AsideSuffix + "123",
	} {
		_, ok := wal.ParseGenerationFileName(name)
		require.False(t, ok, "%q", name)
	}
}

func TestAsideName(t *testing.T) {
	gen, ok := wal.ParseAsideName(wal.GenerationFileName(17) + wal.AsideSuffix + "1700000000000000000")
	require.True(t, ok)
	require.Equal(t, uint64(17), gen)
	for _, name := range []string{
		wal.GenerationFileName(17),
		wal.GenerationFileName(17) + ".aside",
		wal.GenerationFileName(17) + ".other-1",
		"x" + wal.GenerationFileName(17)[1:] + wal.AsideSuffix + "1",
		"short",
	} {
		_, ok := wal.ParseAsideName(name)
		require.False(t, ok, "%q", name)
	}
}
