package envelope

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
)

// normal is r as Decode returns it: no headers is nil, the timestamp is 0
// when there is none, and the producer is the zero Producer when there is
// none or it has a negative field (Encode does not write such a one).
func normal(r Record) Record {
	if len(r.Headers) == 0 {
		r.Headers = nil
	}
	if !r.HasTimestamp {
		r.Timestamp = 0
	}
	if !r.HasProducer || !r.Producer.valid() {
		r.Producer, r.HasProducer = Producer{}, false
	}
	if !r.HasProducer {
		r.Transactional = false
	}
	if !r.Transactional || r.Marker != AbortMarker && r.Marker != CommitMarker {
		r.Marker = NoMarker
	}
	if r.Marker == NoMarker {
		r.MarkerVersion = 0
	}
	return r
}

func TestEnvelopeRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		raw  bool // Payload stores the value itself
	}{
		{"plain value", Record{Value: []byte("hello")}, true},
		{"empty value", Record{Value: []byte{}}, true},
		{"null value", Record{}, false},
		{"value starting with the magic", Record{Value: []byte(Magic + "x")}, false},
		{"value that is the magic", Record{Value: []byte(Magic)}, false},
		{"value that is an envelope", Record{Value: Encode(Record{Key: []byte("k")})}, false},
		{"key", Record{Key: []byte("user-123"), Value: []byte("v")}, false},
		{"empty key", Record{Key: []byte{}, Value: []byte("v")}, false},
		{"tombstone", Record{Key: []byte("k")}, false},
		{"timestamp", Record{Timestamp: 1700000000123, HasTimestamp: true, Value: []byte("v")}, false},
		{"negative timestamp", Record{Timestamp: -1, HasTimestamp: true, Value: []byte("v")}, false},
		{"timestamp ignored without HasTimestamp", Record{Timestamp: 5, Value: []byte("v"), Key: []byte("k")}, false},
		{"headers", Record{Headers: []Header{{"a", []byte("1")}, {"", []byte{}}, {"n", nil}, {"a", []byte("2")}}, Value: []byte("v")}, false},
		{"empty headers slice", Record{Headers: []Header{}, Value: []byte("v")}, true},
		{"producer", Record{Producer: Producer{ID: 7, Epoch: 2, Sequence: 41}, HasProducer: true, Value: []byte("v")}, false},
		{"producer of zeros", Record{HasProducer: true, Value: []byte("v")}, false},
		{"producer at its maxima", Record{Producer: Producer{ID: math.MaxInt64, Epoch: math.MaxInt16, Sequence: math.MaxInt32}, HasProducer: true, Value: []byte("v")}, false},
		{"producer ignored without HasProducer", Record{Producer: Producer{ID: 7}, Value: []byte("v")}, true},
		{"producer id -1 is no producer", Record{Producer: Producer{ID: -1, Epoch: -1, Sequence: -1}, HasProducer: true, Key: []byte("k"), Value: []byte("v")}, false},
		{"producer and timestamp", Record{Timestamp: 42, HasTimestamp: true, Producer: Producer{ID: 1, Epoch: 0, Sequence: 5}, HasProducer: true, Value: []byte("v")}, false},
		{"transactional", Record{Producer: Producer{ID: 7, Epoch: 2, Sequence: 41}, HasProducer: true, Transactional: true, Value: []byte("v")}, false},
		{"transactional without a producer is plain", Record{Transactional: true, Value: []byte("v")}, true},
		{"commit marker", Record{Producer: Producer{ID: 7, Epoch: 3}, HasProducer: true, Transactional: true, Marker: CommitMarker, MarkerVersion: 1<<63 + 5}, false},
		{"marker version ignored without a marker", Record{Producer: Producer{ID: 7}, HasProducer: true, Transactional: true, MarkerVersion: 9, Value: []byte("v")}, false},
		{"abort marker", Record{Producer: Producer{ID: 7, Epoch: 3}, HasProducer: true, Transactional: true, Marker: AbortMarker}, false},
		{"marker without the transactional flag is dropped", Record{Producer: Producer{ID: 7}, HasProducer: true, Marker: CommitMarker, Value: []byte("v")}, false},
		{"unknown marker is dropped", Record{Producer: Producer{ID: 7}, HasProducer: true, Transactional: true, Marker: 9, Value: []byte("v")}, false},
		{"everything", Record{Key: []byte("k"), Headers: []Header{{"h", []byte("x")}}, Timestamp: 42, HasTimestamp: true, Producer: Producer{ID: 1 << 40, Epoch: 3, Sequence: 1 << 30}, HasProducer: true, Value: bytes.Repeat([]byte("v"), 300)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Payload(tt.r)
			if raw := bytes.Equal(p, tt.r.Value) && tt.r.Value != nil && !bytes.HasPrefix(p, []byte(Magic)); raw != tt.raw {
				t.Fatalf("Payload stored raw = %v, want %v (%q)", raw, tt.raw, p)
			}
			want := normal(tt.r)
			if got := Decode(p); !reflect.DeepEqual(got, want) {
				t.Fatalf("Decode(Payload(r)) = %#v, want %#v", got, want)
			}
			e := Encode(tt.r)
			got, err := Parse(e)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("Parse(Encode(r)) = %#v, %v; want %#v", got, err, want)
			}
			if again := Encode(got); !bytes.Equal(again, e) {
				t.Fatalf("Encode is not canonical: %x then %x", e, again)
			}
		})
	}
}

// The byte-by-byte layout of doc.go § The format, version 1.
func TestEnvelopeLayout(t *testing.T) {
	got := Encode(Record{
		Key:          []byte("k"),
		Headers:      []Header{{"h", nil}},
		Timestamp:    0x0102030405060708,
		HasTimestamp: true,
		Value:        []byte("vv"),
	})
	want := []byte{
		0xff, 'P', 'S', 'E', // magic
		1,                                              // version
		1,                                              // flags: timestamp
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // timestamp
		2, 'k', // key: length 1 (zigzag 2)
		4, 'v', 'v', // value: length 2
		2,      // header count 1
		2, 'h', // header key
		1, // header value: null (-1, zigzag 1)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode = % x\nwant     % x", got, want)
	}
	if got := Encode(Record{}); !bytes.Equal(got, []byte{0xff, 'P', 'S', 'E', 1, 0, 1, 1, 0}) {
		t.Fatalf("Encode(Record{}) = % x", got)
	}
}

// The producer identity of doc.go § The format, version 1: flag bit 1, 14
// bytes after the timestamp (or after the flags without one), big-endian
// like the timestamp.
func TestEnvelopeLayoutProducer(t *testing.T) {
	producer := Producer{ID: 0x0102030405060708, Epoch: 0x090a, Sequence: 0x0b0c0d0e}
	tests := []struct {
		name string
		r    Record
		want []byte
	}{
		{"timestamp and producer", Record{
			Timestamp: 0x1112131415161718, HasTimestamp: true,
			Producer: producer, HasProducer: true,
			Value: []byte("v"),
		}, []byte{
			0xff, 'P', 'S', 'E', // magic
			1,                                              // version
			3,                                              // flags: timestamp, producer
			0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, // timestamp
			0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // producer id
			0x09, 0x0a, // producer epoch
			0x0b, 0x0c, 0x0d, 0x0e, // sequence
			1,      // key: null
			2, 'v', // value: length 1
			0, // header count 0
		}},
		{"producer only", Record{
			Key:      []byte("k"),
			Producer: producer, HasProducer: true,
		}, []byte{
			0xff, 'P', 'S', 'E', // magic
			1,                                              // version
			2,                                              // flags: producer
			0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // producer id
			0x09, 0x0a, // producer epoch
			0x0b, 0x0c, 0x0d, 0x0e, // sequence
			2, 'k', // key: length 1
			1, // value: null
			0, // header count 0
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Encode(tt.r)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("Encode = % x\nwant     % x", got, tt.want)
			}
			if p, ok := ProducerOf(got); !ok || p != producer {
				t.Fatalf("ProducerOf = %+v, %v; want %+v", p, ok, producer)
			}
		})
	}
}

// Decode is strict: whatever is not exactly what Encode writes reads as a
// plain value (doc.go § One encoder, one strict decoder).
func TestEnvelopeDecodeRefuses(t *testing.T) {
	valid := Encode(Record{Key: []byte("k"), Headers: []Header{{"h", []byte("x")}}, Value: []byte("v")})
	m := []byte(Magic)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name    string
		payload []byte
		noMagic bool
	}{
		{"empty", []byte{}, true},
		{"nil", nil, true},
		{"plain", []byte("hello"), true},
		{"short magic", m[:3], true},
		{"magic alone", m, false},
		{"no flags", cat(m, []byte{1}), false},
		{"version 0", cat(m, []byte{0, 0, 1, 1, 0}), false},
		{"version 2", cat(m, []byte{2, 0, 1, 1, 0}), false},
		{"unknown flag", cat(m, []byte{1, 4, 1, 1, 0}), false},
		{"unknown flag beside known ones", cat(m, []byte{1, 0x83}, make([]byte, 22), []byte{1, 1, 0}), false},
		{"truncated timestamp", cat(m, []byte{1, 1, 0, 0, 0}), false},
		{"transactional without a producer", cat(m, []byte{1, 4, 1, 1, 0}), false},
		{"marker without a producer", cat(m, []byte{1, 0x0c, 0, 1, 1, 0}), false},
		{"marker not transactional", cat(m, []byte{1, 0x0a}, producerBytes(1, 0, 0), []byte{1}, make([]byte, 8), []byte{1, 1, 0}), false},
		{"truncated marker", cat(m, []byte{1, 0x0e}, producerBytes(1, 0, 0)), false},
		{"marker without its version", cat(m, []byte{1, 0x0e}, producerBytes(1, 0, 0), []byte{1, 0, 0, 0, 1, 1, 0}), false},
		{"unknown marker type", cat(m, []byte{1, 0x0e}, producerBytes(1, 0, 0), []byte{2}, make([]byte, 8), []byte{1, 1, 0}), false},
		{"truncated producer", cat(m, []byte{1, 2}, make([]byte, 13)), false},
		{"truncated producer after a timestamp", cat(m, []byte{1, 3}, make([]byte, 8+13)), false},
		{"producer without the record", cat(m, []byte{1, 2}, make([]byte, 14)), false},
		{"negative producer id", cat(m, []byte{1, 2}, producerBytes(-1, 0, 0), []byte{1, 1, 0}), false},
		{"producer id of min int64", cat(m, []byte{1, 2}, producerBytes(math.MinInt64, 0, 0), []byte{1, 1, 0}), false},
		{"negative epoch", cat(m, []byte{1, 2}, producerBytes(0, -1, 0), []byte{1, 1, 0}), false},
		{"negative sequence", cat(m, []byte{1, 2}, producerBytes(0, 0, -1), []byte{1, 1, 0}), false},
		{"negative sequence after a timestamp", cat(m, []byte{1, 3}, make([]byte, 8), producerBytes(0, 0, math.MinInt32), []byte{1, 1, 0}), false},
		{"missing value", cat(m, []byte{1, 0, 1}), false},
		{"missing header count", cat(m, []byte{1, 0, 1, 1}), false},
		{"key length -2", cat(m, []byte{1, 0, 3, 1, 0}), false},
		{"key longer than the bytes left", cat(m, []byte{1, 0, 20, 'k', 1, 0}), false},
		{"value longer than the bytes left", cat(m, []byte{1, 0, 1, 4, 'v', 0}), false},
		{"non-minimal varint", cat(m, []byte{1, 0, 0x81, 0x00, 1, 0}), false},
		{"overflowing varint", cat(m, []byte{1, 0}, bytes.Repeat([]byte{0xff}, 11)), false},
		{"huge header count", cat(m, []byte{1, 0, 1, 1, 0xfe, 0xff, 0xff, 0xff, 0x0f}), false},
		{"negative header count", cat(m, []byte{1, 0, 1, 1, 1}), false},
		{"null header key", cat(m, []byte{1, 0, 1, 1, 2, 1, 1}), false},
		{"truncated header", cat(m, []byte{1, 0, 1, 1, 2, 2, 'h'}), false},
		{"trailing byte", cat(valid, []byte{0}), false},
		{"valid but one byte short", valid[:len(valid)-1], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.payload)
			if tt.noMagic {
				if !errors.Is(err, ErrNoMagic) {
					t.Fatalf("Parse = %v, want ErrNoMagic", err)
				}
			} else {
				var fe *FormatError
				if !errors.As(err, &fe) || !errors.Is(err, ErrMalformed) {
					t.Fatalf("Parse = %v, want a *FormatError", err)
				}
				if fe.Pos < len(Magic) || fe.Pos > len(tt.payload) {
					t.Fatalf("FormatError.Pos = %d outside [%d, %d]", fe.Pos, len(Magic), len(tt.payload))
				}
			}
			got := Decode(tt.payload)
			if !reflect.DeepEqual(got, Record{Value: tt.payload}) {
				t.Fatalf("Decode = %#v, want the payload as a plain value", got)
			}
		})
	}
}

// producerBytes is a producer field as doc.go lays it out, whatever the
// sign of its parts.
func producerBytes(id int64, epoch int16, seq int32) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(id))
	b = binary.BigEndian.AppendUint16(b, uint16(epoch))
	return binary.BigEndian.AppendUint32(b, uint32(seq))
}

// ProducerOf reads the producer identity of a whole, valid envelope that
// has one, and nothing from anything else: it agrees with Parse.
func TestEnvelopeProducerOf(t *testing.T) {
	p := Producer{ID: 12, Epoch: 3, Sequence: 99}
	withProducer := Encode(Record{Key: []byte("k"), Headers: []Header{{"h", []byte("x")}}, Timestamp: 5, HasTimestamp: true, Producer: p, HasProducer: true, Value: []byte("v")})
	tests := []struct {
		name    string
		payload []byte
		ok      bool
	}{
		{"raw value", []byte("hello"), false},
		{"empty", []byte{}, false},
		{"nil", nil, false},
		{"envelope without producer", Encode(Record{Key: []byte("k"), Timestamp: 5, HasTimestamp: true, Value: []byte("v")}), false},
		{"envelope with producer", withProducer, true},
		{"producer only", Encode(Record{Producer: p, HasProducer: true}), true},
		{"Payload of a plain value with a producer", Payload(Record{Producer: p, HasProducer: true, Value: []byte("v")}), true},
		{"truncated in the producer", withProducer[:headerLen+timestampLen+producerLen-1], false},
		{"truncated after the producer", withProducer[:headerLen+timestampLen+producerLen], false},
		{"truncated in the last header", withProducer[:len(withProducer)-1], false},
		{"trailing byte", append(bytes.Clone(withProducer), 0), false},
		{"negative sequence", bytes.Join([][]byte{[]byte(Magic), {1, 2}, producerBytes(12, 3, -1), {1, 1, 0}}, nil), false},
		{"unknown flag", bytes.Join([][]byte{[]byte(Magic), {1, 0x12}, producerBytes(12, 3, 99), {1, 1, 0}}, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ProducerOf(tt.payload)
			if ok != tt.ok || (ok && got != p) || (!ok && got != Producer{}) {
				t.Fatalf("ProducerOf = %+v, %v; want %+v, %v", got, ok, p, tt.ok)
			}
			r, err := Parse(tt.payload)
			if parsed := err == nil && r.HasProducer; parsed != ok || (ok && r.Producer != got) {
				t.Fatalf("ProducerOf = %+v, %v disagrees with Parse = %+v, %v", got, ok, r, err)
			}
		})
	}
}

// ProducerOf allocates nothing, so rebuilding producer state from a log
// costs a walk over each record's lengths and no garbage.
func TestEnvelopeProducerOfAllocatesNothing(t *testing.T) {
	payload := Encode(Record{Key: []byte("k"), Headers: []Header{{"a", []byte("1")}, {"b", nil}}, Producer: Producer{ID: 1, Sequence: 2}, HasProducer: true, Value: []byte("v")})
	if n := testing.AllocsPerRun(100, func() { ProducerOf(payload) }); n != 0 {
		t.Fatalf("ProducerOf allocates %v times per call", n)
	}
}

// Records written before envelopes existed are plain payloads: they read
// as a value with no key (doc.go § Data written before).
func TestEnvelopeOldPayloadReadsAsValue(t *testing.T) {
	old := []byte(`{"user":"u1","action":"login"}`)
	got := Decode(old)
	if got.Key != nil || got.Headers != nil || got.HasTimestamp || !bytes.Equal(got.Value, old) {
		t.Fatalf("Decode(old) = %#v", got)
	}
}

// Decode's slices share the payload but are capped, so appending to one
// does not overwrite the next.
func TestEnvelopeDecodeSlicesAreCapped(t *testing.T) {
	p := Encode(Record{Key: []byte("k"), Value: []byte("v")})
	r := Decode(p)
	_ = append(r.Key, 'X')
	if got := Decode(p); string(got.Value) != "v" {
		t.Fatalf("value after appending to the key: %q", got.Value)
	}
}
