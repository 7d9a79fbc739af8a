package client

import (
	"bytes"
	"testing"
)

// FuzzParseOffset: the offset-file decoder never panics, and whatever it
// accepts re-encodes to a file that decodes to the same offset.
func FuzzParseOffset(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("{\"version\": 1, \"offset\": 123}\n"))
	f.Add([]byte("{\"version\": 1, \"offset\": 123}\ngarbage"))
	f.Add([]byte(`{"version": 1, "offset": -1}`))
	f.Add([]byte(`{"version": 1, "offset": 18446744073709551615}`))
	f.Add(bytes.Repeat([]byte("["), 1000))
	f.Fuzz(func(t *testing.T, data []byte) {
		off, err := parseOffset(data)
		if err != nil {
			return
		}
		again, err := parseOffset(encodeOffset(off))
		if err != nil || again != off {
			t.Fatalf("round trip of %d: %d, %v", off, again, err)
		}
		twice, err := parseOffset(data)
		if err != nil || twice != off {
			t.Fatalf("second decode differs: %d, %v", twice, err)
		}
	})
}
