package client

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseOffset: the offset-file decoder never panics, refuses with an
// *OffsetCorruptionError only, and whatever it accepts re-encodes to a file
// that decodes to the same offset. Every file of its corpus is also fed to
// `pystream log verify`, which must refuse exactly the same ones
// (tools/internal/verify).
func FuzzParseOffset(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("{\"version\": 1, \"offset\": 123}\n"))
	f.Add([]byte("{\"version\": 1, \"offset\": 123}\ngarbage"))
	f.Add([]byte(`{"version": 1, "offset": -1}`))
	f.Add([]byte(`{"version": 1, "offset": 18446744073709551615}`))
	f.Add(bytes.Repeat([]byte("["), 1000))
	f.Fuzz(func(t *testing.T, data []byte) {
		off, err := ParseOffsetFile(data)
		if err != nil {
			var oce *OffsetCorruptionError
			if !errors.As(err, &oce) {
				t.Fatalf("error %v is not an *OffsetCorruptionError", err)
			}
			return
		}
		again, err := ParseOffsetFile(encodeOffset(off))
		if err != nil || again != off {
			t.Fatalf("round trip of %d: %d, %v", off, again, err)
		}
		twice, err := ParseOffsetFile(data)
		if err != nil || twice != off {
			t.Fatalf("second decode differs: %d, %v", twice, err)
		}
	})
}
