package wal

// Internal names the external tests of the package use.
var (
	AppendEntry    = appendEntry
	AppendHeader   = appendHeader
	ParseHeader    = parseHeader
	ParseAsideName = parseAsideName
	ValidRel       = validRel
)

// The format's sizes, for tests that build damaged input.
const (
	HeaderSize = headerSize
	EntryHead  = entryHead
	EntryMin   = entryMin
	MaxPath    = maxPath
	KindWrite  = kindWrite
)

// DecodeEntry decodes the entry at the start of b: its path, position,
// data and length in bytes.
func DecodeEntry(b []byte) (path string, pos int64, data []byte, n int, err error) {
	e, n, err := decodeEntry(b)
	return e.path, e.pos, e.data, n, err
}
