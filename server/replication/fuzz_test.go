package replication

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/pystream/pystream/log"
)

// FuzzDecodeFrames checks the decoder of every records body (replicate,
// records, produce) on arbitrary bytes, with the invariants franz-go's
// FuzzReadEntries checks: it never panics; it accepts only whole frames, so
// on success the records re-encode to exactly the input (the frame format is
// canonical: one encoding per record) and it consumed no more than it was
// given; it fails only with the frame errors log.DecodeFrame documents; it
// decides the same twice; and it keeps no reference to its input.
// Seeds: testdata/fuzz/FuzzDecodeFrames.
func FuzzDecodeFrames(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		recs, err := decodeFrames(in)
		if !bytes.Equal(in, orig) {
			t.Fatalf("decodeFrames changed its input")
		}
		again, err2 := decodeFrames(in)
		if (err == nil) != (err2 == nil) || len(recs) != len(again) {
			t.Fatalf("two decodes differ: %v / %v, %d / %d records", err, err2, len(recs), len(again))
		}
		if err != nil {
			if recs != nil {
				t.Fatalf("error %v with %d records", err, len(recs))
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, log.ErrMalformedFrame) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		clear(in) // the records must not alias the body they came from
		if got := encodeFrames(recs); !bytes.Equal(got, orig) {
			t.Fatalf("re-encoded records differ from the input:\n got %x\nwant %x", got, orig)
		}
		if got := encodeFrames(again); !bytes.Equal(got, orig) {
			t.Fatalf("second decode re-encodes differently")
		}
	})
}
