package envelope

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzEnvelopeDecode: Parse never panics, refuses with ErrNoMagic or a
// *FormatError only, whatever it accepts re-encodes to the very same bytes
// (doc.go § One encoder, one strict decoder), Decode agrees with Parse,
// decoding twice gives the same record, and ProducerOf and IdentityOf
// find a producer exactly when Parse accepts a record that has one, and
// the same one, with its transactional flag and marker.
func FuzzEnvelopeDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("plain value"))
	f.Add([]byte(Magic))
	f.Add(Encode(Record{}))
	f.Add(Encode(Record{Key: []byte("k"), Headers: []Header{{"h", []byte("x")}, {"n", nil}}, Timestamp: 7, HasTimestamp: true, Value: []byte("v")}))
	f.Add(append(Encode(Record{Key: []byte("k")}), "garbage"...))
	f.Add(append([]byte(Magic), 1, 0, 0xfe, 0xff, 0xff, 0xff, 0x0f))
	f.Add(Encode(Record{Key: []byte("k"), Timestamp: 7, HasTimestamp: true, Producer: Producer{ID: 1, Epoch: 2, Sequence: 3}, HasProducer: true, Value: []byte("v")}))
	f.Add(Encode(Record{Producer: Producer{ID: 1 << 40}, HasProducer: true}))
	f.Add(Encode(Record{Producer: Producer{ID: 5, Epoch: 1}, HasProducer: true, Transactional: true, Value: []byte("v")}))
	f.Add(Encode(Record{Producer: Producer{ID: 5, Epoch: 2}, HasProducer: true, Transactional: true, Marker: CommitMarker}))
	f.Add(append([]byte(Magic), 1, 0x0e, 0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 1, 1, 0))
	f.Add(append([]byte(Magic), 1, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 1, 0))
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := Parse(payload)
		p, ok := ProducerOf(payload)
		if ok != (err == nil && r.HasProducer) || p != r.Producer {
			t.Fatalf("ProducerOf = %+v, %v; Parse = %+v, %v", p, ok, r, err)
		}
		if id, ok := IdentityOf(payload); ok != (err == nil && r.HasProducer) || id != (Identity{Producer: r.Producer, Transactional: r.Transactional, Marker: r.Marker, MarkerVersion: r.MarkerVersion}) {
			t.Fatalf("IdentityOf = %+v, %v; Parse = %+v, %v", id, ok, r, err)
		}
		if err != nil {
			var fe *FormatError
			if !errors.Is(err, ErrNoMagic) && !errors.As(err, &fe) {
				t.Fatalf("error %v is neither ErrNoMagic nor a *FormatError", err)
			}
			if fe != nil && (fe.Pos < len(Magic) || fe.Pos > len(payload)) {
				t.Fatalf("FormatError.Pos %d outside the payload of %d bytes", fe.Pos, len(payload))
			}
			if got := Decode(payload); !reflect.DeepEqual(got, Record{Value: payload}) {
				t.Fatalf("Decode of a refused payload = %#v", got)
			}
			return
		}
		if again := Encode(r); !bytes.Equal(again, payload) {
			t.Fatalf("accepted %x but it re-encodes to %x", payload, again)
		}
		if got := Decode(payload); !reflect.DeepEqual(got, r) {
			t.Fatalf("Decode %#v, Parse %#v", got, r)
		}
		if twice, err := Parse(payload); err != nil || !reflect.DeepEqual(twice, r) {
			t.Fatalf("second Parse differs: %#v, %v", twice, err)
		}
	})
}

// FuzzEnvelopeRoundTrip: every record a writer can give decodes to itself
// through Payload and through Encode (doc.go § Payload: what to store),
// producer identity included, and ProducerOf reads that identity back. A
// producer with a negative field is none (normal).
func FuzzEnvelopeRoundTrip(f *testing.F) {
	f.Add([]byte(nil), false, []byte("v"), false, int64(0), false, "", []byte(nil), false, uint8(0), int64(0), int16(0), int32(0), false)
	f.Add([]byte("k"), true, []byte(nil), false, int64(1700000000000), true, "h", []byte("x"), true, uint8(2), int64(7), int16(1), int32(41), true)
	f.Add([]byte{}, true, []byte(Magic), true, int64(-1), true, "", []byte{}, true, uint8(1), int64(-1), int16(-1), int32(-1), true)
	f.Fuzz(func(t *testing.T, key []byte, hasKey bool, value []byte, hasValue bool, ts int64, hasTS bool, hkey string, hval []byte, hasHVal bool, nHeaders uint8,
		pid int64, epoch int16, seq int32, hasProducer bool) {
		// The higher bits of nHeaders say whether the record is
		// transactional and which marker it is, keeping the fuzzer's
		// arguments (and its corpus) as they were.
		r := Record{Timestamp: ts, HasTimestamp: hasTS, Producer: Producer{ID: pid, Epoch: epoch, Sequence: seq}, HasProducer: hasProducer,
			Transactional: nHeaders&0x10 != 0, Marker: Marker(nHeaders >> 5 & 3), MarkerVersion: uint64(ts)}
		if hasKey {
			r.Key = append([]byte{}, key...)
		}
		if hasValue {
			r.Value = append([]byte{}, value...)
		}
		for i := range int(nHeaders % 4) {
			h := Header{Key: hkey}
			if hasHVal || i%2 == 1 {
				h.Value = append([]byte{}, hval...)
			}
			r.Headers = append(r.Headers, h)
		}
		want := normal(r)
		if got := Decode(Payload(r)); !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(Payload(r)) = %#v, want %#v", got, want)
		}
		if got, err := Parse(Encode(r)); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(Encode(r)) = %#v, %v; want %#v", got, err, want)
		}
		if p, ok := ProducerOf(Payload(r)); ok != want.HasProducer || p != want.Producer {
			t.Fatalf("ProducerOf(Payload(r)) = %+v, %v; want %+v, %v", p, ok, want.Producer, want.HasProducer)
		}
		wantID := Identity{Producer: want.Producer, Transactional: want.Transactional, Marker: want.Marker, MarkerVersion: want.MarkerVersion}
		if id, ok := IdentityOf(Payload(r)); ok != want.HasProducer || id != wantID {
			t.Fatalf("IdentityOf(Payload(r)) = %+v, %v; want %+v, %v", id, ok, wantID, want.HasProducer)
		}
	})
}
