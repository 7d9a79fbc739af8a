package replication

import (
	"bytes"
	"errors"
	"fmt"
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

// FuzzDecodeError checks the decoder of every refusal (errors.go,
// DecodeError) on arbitrary codes, messages, names and fields: it never
// panics, nor does anything a caller does with what it returns (Error,
// errors.Is, errors.As, CodeOf); it returns an error for every refusal and
// leaves the refusal as it was; it decides the same twice; and what it
// returns is sent again under the same name (EncodeError), so that a node
// that forwards a refusal reports it as the node that refused it did.
// Seeds: testdata/fuzz/FuzzDecodeError.
func FuzzDecodeError(f *testing.F) {
	f.Fuzz(func(t *testing.T, code, msg, reason string, detail []byte) {
		e := &Error{Code: code, Message: msg, Reason: reason, Detail: bytes.Clone(detail)}
		err := DecodeError(e)
		if err == nil {
			t.Fatalf("DecodeError(%+v) = nil", e)
		}
		if e.Code != code || e.Message != msg || e.Reason != reason || !bytes.Equal(e.Detail, detail) {
			t.Fatalf("DecodeError changed its refusal to %+v", e)
		}
		text := err.Error()
		again := DecodeError(e)
		if fmt.Sprintf("%T", again) != fmt.Sprintf("%T", err) || again.Error() != text {
			t.Fatalf("two decodes differ: %T %q / %T %q", err, text, again, again.Error())
		}
		for _, s := range sentinels {
			_ = errors.Is(err, s.err)
		}
		for _, w := range wireTypes {
			_, _ = w.as(err)
		}
		if got := CodeOf(err); got != "" && got != code {
			t.Fatalf("CodeOf = %q, want %q or none", got, code)
		}
		if _, typed := err.(*Error); typed && err != error(e) {
			t.Fatalf("DecodeError made another *Error")
		}
		if re := EncodeError(err); re.Reason != reason {
			t.Fatalf("decoded as %T %q, sent again as %q, not %q", err, text, re.Reason, reason)
		}
	})
}
