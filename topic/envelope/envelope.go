package envelope

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Magic is the four bytes every envelope starts with.
const Magic = "\xffPSE"

// Version is the envelope version Encode writes and Parse accepts.
const Version = 1

// flagTimestamp is flag bit 0: an 8-byte timestamp follows the flags.
const flagTimestamp = 1 << 0

// headerLen is the fixed part of an envelope: magic, version, flags.
const headerLen = len(Magic) + 2

// Header is one Kafka record header. Its key is a string and never null;
// its value may be null (nil) or empty ([]byte{}), which stay distinct.
type Header struct {
	Key   string
	Value []byte
}

// Record is what an envelope carries. The zero Record is a null value with
// no key, header or timestamp.
type Record struct {
	// Key is nil for no key (Kafka's null key); []byte{} is an empty key.
	Key []byte
	// Headers in order; nil and empty mean the same: none.
	Headers []Header
	// Timestamp is a producer's create time in milliseconds since the
	// epoch; it is meaningful only when HasTimestamp is true.
	Timestamp int64
	// HasTimestamp says whether the producer gave a timestamp.
	HasTimestamp bool
	// Value is nil for a null value (a Kafka tombstone); []byte{} is an
	// empty value.
	Value []byte
}

// Sentinel errors; check them with errors.Is.
var (
	// ErrNoMagic is returned by Parse for a payload that does not start
	// with Magic: a plain value, not an envelope.
	ErrNoMagic = errors.New("envelope: no magic")
	// ErrMalformed is wrapped by every *FormatError: the payload starts
	// with Magic but is not one whole, valid envelope.
	ErrMalformed = errors.New("envelope: malformed")
)

// FormatError reports where and why a payload that starts with Magic is not
// a valid envelope.
type FormatError struct {
	// Pos is the byte position in the payload where the problem was found.
	Pos int
	// Reason says what is wrong, in words.
	Reason string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("envelope: malformed at byte %d: %s", e.Pos, e.Reason)
}

// Unwrap returns ErrMalformed.
func (e *FormatError) Unwrap() error { return ErrMalformed }

// Payload returns what to store for r: r.Value unchanged when r has no key,
// no header, no timestamp, a non-null value that does not start with Magic;
// the envelope (Encode(r)) otherwise. Decode(Payload(r)) is r.
func Payload(r Record) []byte {
	if r.Key == nil && len(r.Headers) == 0 && !r.HasTimestamp &&
		r.Value != nil && !bytes.HasPrefix(r.Value, []byte(Magic)) {
		return r.Value
	}
	return Encode(r)
}

// Encode returns r as an envelope, always. r.Timestamp is written only when
// r.HasTimestamp is true.
func Encode(r Record) []byte {
	n := headerLen + 3*binary.MaxVarintLen64 + len(r.Key) + len(r.Value)
	if r.HasTimestamp {
		n += 8
	}
	for _, h := range r.Headers {
		n += 2*binary.MaxVarintLen64 + len(h.Key) + len(h.Value)
	}
	b := make([]byte, 0, n)
	b = append(b, Magic...)
	b = append(b, Version)
	if r.HasTimestamp {
		b = append(b, flagTimestamp)
		b = binary.BigEndian.AppendUint64(b, uint64(r.Timestamp))
	} else {
		b = append(b, 0)
	}
	b = appendBytes(b, r.Key)
	b = appendBytes(b, r.Value)
	b = binary.AppendVarint(b, int64(len(r.Headers)))
	for _, h := range r.Headers {
		b = binary.AppendVarint(b, int64(len(h.Key)))
		b = append(b, h.Key...)
		b = appendBytes(b, h.Value)
	}
	return b
}

// appendBytes appends a length (-1 for nil) and the bytes.
func appendBytes(b, p []byte) []byte {
	if p == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(p)))
	return append(b, p...)
}

// Decode returns the record a stored payload holds. It never fails: a
// payload that is not one whole, valid envelope (every plain value, every
// payload written before envelopes existed) is Record{Value: payload}.
// The slices it returns share the payload's memory.
func Decode(payload []byte) Record {
	r, err := Parse(payload)
	if err != nil {
		return Record{Value: payload}
	}
	return r
}

// Parse decodes an envelope strictly: ErrNoMagic for a payload that does
// not start with Magic, a *FormatError for one that does but is not exactly
// what Encode writes. The slices it returns share the payload's memory.
func Parse(payload []byte) (Record, error) {
	if !bytes.HasPrefix(payload, []byte(Magic)) {
		return Record{}, ErrNoMagic
	}
	d := decoder{b: payload, pos: len(Magic)}
	if len(payload) < headerLen {
		return Record{}, d.fail("truncated before the flags")
	}
	if v := payload[d.pos]; v != Version {
		return Record{}, d.fail(fmt.Sprintf("unknown version %d", v))
	}
	d.pos++
	flags := payload[d.pos]
	if flags&^flagTimestamp != 0 {
		return Record{}, d.fail(fmt.Sprintf("unknown flags %#02x", flags))
	}
	d.pos++
	var r Record
	if flags&flagTimestamp != 0 {
		if len(payload)-d.pos < 8 {
			return Record{}, d.fail("truncated timestamp")
		}
		r.HasTimestamp = true
		r.Timestamp = int64(binary.BigEndian.Uint64(payload[d.pos:]))
		d.pos += 8
	}
	var err error
	if r.Key, err = d.bytes("key"); err != nil {
		return Record{}, err
	}
	if r.Value, err = d.bytes("value"); err != nil {
		return Record{}, err
	}
	count, err := d.varint("header count")
	if err != nil {
		return Record{}, err
	}
	// Each header takes at least two bytes (two one-byte lengths), so a
	// count the bytes left cannot hold is refused before any allocation.
	if count < 0 || count > int64(len(payload)-d.pos)/2 {
		return Record{}, d.fail(fmt.Sprintf("header count %d with %d bytes left", count, len(payload)-d.pos))
	}
	if count > 0 {
		r.Headers = make([]Header, count)
		for i := range r.Headers {
			key, err := d.bytes("header key")
			if err != nil {
				return Record{}, err
			}
			if key == nil {
				return Record{}, d.fail("null header key")
			}
			r.Headers[i].Key = string(key)
			if r.Headers[i].Value, err = d.bytes("header value"); err != nil {
				return Record{}, err
			}
		}
	}
	if d.pos != len(payload) {
		return Record{}, d.fail(fmt.Sprintf("%d trailing bytes", len(payload)-d.pos))
	}
	return r, nil
}

// decoder reads an envelope's fields from b, starting at pos.
type decoder struct {
	b   []byte
	pos int
}

func (d *decoder) fail(reason string) error {
	return &FormatError{Pos: d.pos, Reason: reason}
}

// varint reads one zigzag varint in its shortest form.
func (d *decoder) varint(what string) (int64, error) {
	v, n := binary.Varint(d.b[d.pos:])
	switch {
	case n == 0:
		return 0, d.fail("truncated " + what + " varint")
	case n < 0:
		return 0, d.fail(what + " varint overflows 64 bits")
	case n != len(binary.AppendVarint(nil, v)):
		return 0, d.fail(what + " varint not in its shortest form")
	}
	d.pos += n
	return v, nil
}

// bytes reads a length (-1 for nil) and that many bytes, capped.
func (d *decoder) bytes(what string) ([]byte, error) {
	start := d.pos
	n, err := d.varint(what + " length")
	if err != nil {
		return nil, err
	}
	if n == -1 {
		return nil, nil
	}
	if left := len(d.b) - d.pos; n < -1 || n > int64(left) {
		d.pos = start
		return nil, d.fail(fmt.Sprintf("%s length %d with %d bytes left", what, n, left))
	}
	p := d.b[d.pos : d.pos+int(n) : d.pos+int(n)]
	d.pos += int(n)
	return p, nil
}
