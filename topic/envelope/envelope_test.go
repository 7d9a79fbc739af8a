package envelope

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// normal is r as Decode returns it: no headers is nil, and the timestamp
// is 0 when there is none.
func normal(r Record) Record {
	if len(r.Headers) == 0 {
		r.Headers = nil
	}
	if !r.HasTimestamp {
		r.Timestamp = 0
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
		{"everything", Record{Key: []byte("k"), Headers: []Header{{"h", []byte("x")}}, Timestamp: 42, HasTimestamp: true, Value: bytes.Repeat([]byte("v"), 300)}, false},
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
		{"unknown flag", cat(m, []byte{1, 2, 1, 1, 0}), false},
		{"truncated timestamp", cat(m, []byte{1, 1, 0, 0, 0}), false},
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
