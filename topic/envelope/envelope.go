package envelope

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Magic is the four bytes every envelope starts with.
const Magic = "\xffPSE"

// Version is the envelope version Encode writes and Parse accepts.
const Version = 1

// The flag bits. The optional fields they announce follow the flags in bit
// order.
const (
	// flagTimestamp is flag bit 0: an 8-byte timestamp follows the flags.
	flagTimestamp = 1 << 0
	// flagProducer is flag bit 1: a producerLen-byte producer identity
	// follows the timestamp (or the flags, when there is no timestamp).
	flagProducer = 1 << 1
	// flagTransactional is flag bit 2: the record belongs to its
	// producer's open transaction. Only with flag bit 1.
	flagTransactional = 1 << 2
	// flagMarker is flag bit 3: the record is a transaction marker, and a
	// markerLen-byte marker type follows the producer. Only with flag
	// bits 1 and 2.
	flagMarker = 1 << 3
	// knownFlags is every flag bit Parse accepts.
	knownFlags = flagTimestamp | flagProducer | flagTransactional | flagMarker
)

// headerLen is the fixed part of an envelope: magic, version, flags.
const headerLen = len(Magic) + 2

// timestampLen and producerLen are the sizes of the optional fields:
// a big-endian int64; a big-endian int64, int16 and int32.
const (
	timestampLen = 8
	producerLen  = 8 + 2 + 4
	markerLen    = 1 + 8
)

// Marker says whether a record is a transaction marker, and which. The
// zero Marker is none: a record of data.
type Marker uint8

// The markers. A marker ends its producer's open transaction in one
// partition: committed, its records are read by read_committed
// consumers; aborted, they are skipped.
const (
	NoMarker     Marker = 0
	AbortMarker  Marker = 1
	CommitMarker Marker = 2
)

// ControlType is m as a Kafka control record's type, which is also the
// byte an envelope stores: 0 abort, 1 commit; -1 for NoMarker.
func (m Marker) ControlType() int16 { return int16(m) - 1 }

// String names m.
func (m Marker) String() string {
	switch m {
	case NoMarker:
		return "none"
	case AbortMarker:
		return "abort"
	case CommitMarker:
		return "commit"
	}
	return fmt.Sprintf("marker(%d)", uint8(m))
}

// Identity is what an envelope says of the producer behind its record,
// without its key, value or headers: the producer identity, whether the
// record belongs to a transaction, and whether it is a transaction's
// marker.
type Identity struct {
	Producer      Producer
	Transactional bool
	Marker        Marker
	MarkerVersion uint64
}

// Producer is the identity of an idempotent producer's record: its producer
// id, the epoch of that id, and the record's sequence number within (id,
// epoch, partition). None of the three is ever negative in an envelope;
// Kafka's -1 ("no producer id", "no sequence") is a record without one.
type Producer struct {
	ID       int64
	Epoch    int16
	Sequence int32
}

// valid reports whether p can be stored: no field is negative.
func (p Producer) valid() bool {
	return p.ID >= 0 && p.Epoch >= 0 && p.Sequence >= 0
}

// Header is one Kafka record header. Its key is a string and never null;
// its value may be null (nil) or empty ([]byte{}), which stay distinct.
type Header struct {
	Key   string
	Value []byte
}

// Record is what an envelope carries. The zero Record is a null value with
// no key, header, timestamp or producer.
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
	// Producer is the record's producer identity, when HasProducer.
	Producer    Producer
	HasProducer bool
	// Transactional says that the record belongs to its producer's open
	// transaction; it needs a producer (HasProducer).
	Transactional bool
	// Marker, when not NoMarker, makes the record a transaction marker of
	// its producer (Kafka's control record); it needs a producer and
	// Transactional.
	Marker Marker
	// MarkerVersion is a marker's version: the version of the
	// coordinator's state that decided the transaction's end, 0 for none
	// (Kafka's coordinator epoch, in spirit). Written only with Marker.
	MarkerVersion uint64
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
// no header, no timestamp, no producer, a non-null value that does not
// start with Magic; the envelope (Encode(r)) otherwise. Decode(Payload(r))
// is r.
func Payload(r Record) []byte {
	if r.Key == nil && len(r.Headers) == 0 && !r.HasTimestamp && !r.HasProducer &&
		r.Value != nil && !bytes.HasPrefix(r.Value, []byte(Magic)) {
		return r.Value
	}
	return Encode(r)
}

// Encode returns r as an envelope, always. r.Timestamp is written only when
// r.HasTimestamp is true; r.Producer only when r.HasProducer is true and
// none of its fields is negative (an identity with a negative field, such
// as Kafka's -1 for "no producer id", is no identity and is not written).
// Transactional is written only with a producer, and Marker (one of the
// markers) only with both.
func Encode(r Record) []byte {
	withProducer := r.HasProducer && r.Producer.valid()
	transactional := withProducer && r.Transactional
	marker := transactional && (r.Marker == AbortMarker || r.Marker == CommitMarker)
	n := headerLen + 3*binary.MaxVarintLen64 + len(r.Key) + len(r.Value)
	var flags byte
	if r.HasTimestamp {
		flags |= flagTimestamp
		n += timestampLen
	}
	if withProducer {
		flags |= flagProducer
		n += producerLen
	}
	if transactional {
		flags |= flagTransactional
	}
	if marker {
		flags |= flagMarker
		n += markerLen
	}
	for _, h := range r.Headers {
		n += 2*binary.MaxVarintLen64 + len(h.Key) + len(h.Value)
	}
	b := make([]byte, 0, n)
	b = append(b, Magic...)
	b = append(b, Version, flags)
	if r.HasTimestamp {
		b = binary.BigEndian.AppendUint64(b, uint64(r.Timestamp))
	}
	if withProducer {
		b = binary.BigEndian.AppendUint64(b, uint64(r.Producer.ID))
		b = binary.BigEndian.AppendUint16(b, uint16(r.Producer.Epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(r.Producer.Sequence))
	}
	if marker {
		b = append(b, byte(r.Marker.ControlType()))
		b = binary.BigEndian.AppendUint64(b, r.MarkerVersion)
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
	var r Record
	d, err := parseFixed(payload, &r)
	if err != nil {
		return Record{}, err
	}
	if err := d.body(&r); err != nil {
		return Record{}, err
	}
	return r, nil
}

// ProducerOf returns the producer identity of a stored payload without
// decoding its key, headers or value (cheap enough to call on every record
// of a log while rebuilding state); ok is false for a raw payload, an
// envelope without one, or a malformed envelope.
//
// It still checks the whole envelope, without copying or allocating, so it
// agrees with Parse: ok is true exactly when Parse accepts the payload and
// the record has a producer, and p is then that record's Producer.
func ProducerOf(payload []byte) (p Producer, ok bool) {
	id, ok := IdentityOf(payload)
	return id.Producer, ok
}

// IdentityOf is ProducerOf with the rest of the record's identity: whether
// it belongs to a transaction and whether it is a marker. ok is true
// exactly when Parse accepts the payload and the record has a producer.
func IdentityOf(payload []byte) (id Identity, ok bool) {
	var r Record
	d, err := parseFixed(payload, &r)
	if err != nil || !r.HasProducer {
		return Identity{}, false
	}
	if err := d.body(nil); err != nil {
		return Identity{}, false
	}
	return Identity{Producer: r.Producer, Transactional: r.Transactional, Marker: r.Marker, MarkerVersion: r.MarkerVersion}, true
}

// parseFixed checks the magic, version and flags, reads the optional
// fields the flags announce into r, and returns a decoder positioned at the
// key length.
func parseFixed(payload []byte, r *Record) (decoder, error) {
	if !bytes.HasPrefix(payload, []byte(Magic)) {
		return decoder{}, ErrNoMagic
	}
	d := decoder{b: payload, pos: len(Magic)}
	if len(payload) < headerLen {
		return decoder{}, d.fail("truncated before the flags")
	}
	if v := payload[d.pos]; v != Version {
		return decoder{}, d.fail(fmt.Sprintf("unknown version %d", v))
	}
	d.pos++
	flags := payload[d.pos]
	if flags&^knownFlags != 0 {
		return decoder{}, d.fail(fmt.Sprintf("unknown flags %#02x", flags))
	}
	d.pos++
	if flags&flagTimestamp != 0 {
		if len(payload)-d.pos < timestampLen {
			return decoder{}, d.fail("truncated timestamp")
		}
		r.HasTimestamp = true
		r.Timestamp = int64(binary.BigEndian.Uint64(payload[d.pos:]))
		d.pos += timestampLen
	}
	if flags&flagProducer != 0 {
		if len(payload)-d.pos < producerLen {
			return decoder{}, d.fail("truncated producer")
		}
		p := Producer{
			ID:       int64(binary.BigEndian.Uint64(payload[d.pos:])),
			Epoch:    int16(binary.BigEndian.Uint16(payload[d.pos+8:])),
			Sequence: int32(binary.BigEndian.Uint32(payload[d.pos+10:])),
		}
		if !p.valid() {
			return decoder{}, d.fail(fmt.Sprintf("negative producer field: id %d, epoch %d, sequence %d", p.ID, p.Epoch, p.Sequence))
		}
		r.HasProducer = true
		r.Producer = p
		d.pos += producerLen
	}
	if flags&(flagTransactional|flagMarker) != 0 && flags&flagProducer == 0 {
		return decoder{}, d.fail("a transactional record or a marker without a producer")
	}
	if flags&flagMarker != 0 && flags&flagTransactional == 0 {
		return decoder{}, d.fail("a marker that is not transactional")
	}
	r.Transactional = flags&flagTransactional != 0
	if flags&flagMarker != 0 {
		if len(payload)-d.pos < markerLen {
			return decoder{}, d.fail("truncated marker")
		}
		switch t := payload[d.pos]; t {
		case 0:
			r.Marker = AbortMarker
		case 1:
			r.Marker = CommitMarker
		default:
			return decoder{}, d.fail(fmt.Sprintf("unknown marker type %d", t))
		}
		r.MarkerVersion = binary.BigEndian.Uint64(payload[d.pos+1:])
		d.pos += markerLen
	}
	return d, nil
}

// body reads the key, value and headers into r and checks that nothing
// follows them. With a nil r it only checks them, allocating nothing.
func (d *decoder) body(r *Record) error {
	key, err := d.bytes("key")
	if err != nil {
		return err
	}
	value, err := d.bytes("value")
	if err != nil {
		return err
	}
	count, err := d.varint("header count")
	if err != nil {
		return err
	}
	// Each header takes at least two bytes (two one-byte lengths), so a
	// count the bytes left cannot hold is refused before any allocation.
	if count < 0 || count > int64(len(d.b)-d.pos)/2 {
		return d.fail(fmt.Sprintf("header count %d with %d bytes left", count, len(d.b)-d.pos))
	}
	var headers []Header
	if r != nil && count > 0 {
		headers = make([]Header, count)
	}
	for i := range int(count) {
		hkey, err := d.bytes("header key")
		if err != nil {
			return err
		}
		if hkey == nil {
			return d.fail("null header key")
		}
		hvalue, err := d.bytes("header value")
		if err != nil {
			return err
		}
		if headers != nil {
			headers[i] = Header{Key: string(hkey), Value: hvalue}
		}
	}
	if d.pos != len(d.b) {
		return d.fail(fmt.Sprintf("%d trailing bytes", len(d.b)-d.pos))
	}
	if r != nil {
		r.Key, r.Value, r.Headers = key, value, headers
	}
	return nil
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
	case n > 1 && d.b[d.pos+n-1] == 0:
		// Only a longer form than needed ends in a zero byte (seven
		// zero bits that carry nothing).
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

// SequenceAt is the sequence number of the record i places after one
// numbered first, in an idempotent producer's numbering: first+i,
// starting again from 0 past the largest int32, as Kafka's sequence
// numbers do. i must not be negative.
func SequenceAt(first int32, i int64) int32 {
	return int32((int64(first) + i) % (math.MaxInt32 + 1))
}
