package segment_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pystream/pystream/log/segment"
)

// FuzzSidecarParse checks the sidecar parser on arbitrary bytes with
// franz-go's invariants: it never panics, refuses with an error wrapping
// ErrSidecar, and whatever it accepts re-encodes to exactly the input (the
// format has no slack) and parses the same twice. Seeds:
// testdata/fuzz/FuzzSidecarParse (empty, a header claiming the most
// entries, a valid sidecar, valid plus garbage).
func FuzzSidecarParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := segment.ParseAndReencodeSidecar(in)
		if err != nil {
			if !errors.Is(err, segment.ErrSidecar) {
				t.Fatalf("refusal does not wrap ErrSidecar: %v", err)
			}
			return
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("re-encoded sidecar differs:\n got %x\nwant %x", out, in)
		}
		again, err := segment.ParseAndReencodeSidecar(in)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}

// TestSegmentSidecarSeedsValid: the valid seed is a real sidecar, written
// by a seal (regenerate with -update after a format change).
func TestSegmentSidecarSeedsValid(t *testing.T) {
	valid, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzSidecarParse", "valid"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := segment.ParseAndReencodeSidecar(fuzzSeedBody(t, valid)); err != nil {
		t.Fatalf("the valid seed does not parse: %v", err)
	}
}

// fuzzSeedBody decodes a "go test fuzz v1" file holding one []byte.
func fuzzSeedBody(t *testing.T, file []byte) []byte {
	t.Helper()
	lines := bytes.SplitN(file, []byte("\n"), 2)
	if len(lines) < 2 || string(lines[0]) != "go test fuzz v1" {
		t.Fatal("not a fuzz seed file")
	}
	return parseGoBytesLiteral(t, string(bytes.TrimSpace(lines[1])))
}

func parseGoBytesLiteral(t *testing.T, s string) []byte {
	t.Helper()
	inner, ok := strings.CutPrefix(s, "[]byte(")
	inner, ok2 := strings.CutSuffix(inner, ")")
	if !ok || !ok2 {
		t.Fatalf("not a []byte literal: %.40s", s)
	}
	b, err := strconv.Unquote(inner)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(b)
}

var updateSeeds = flag.Bool("update", false, "rewrite the fuzz seed corpus in testdata/fuzz/")

// TestSegmentFuzzSeeds writes the seed corpus with -update: a valid sidecar
// from a real seal, valid plus garbage, empty, and a header that claims
// the most entries.
func TestSegmentFuzzSeeds(t *testing.T) {
	if !*updateSeeds {
		t.Skip("run with -update to rewrite testdata/fuzz/FuzzSidecarParse")
	}
	dir, _ := threeSegments(t)
	valid, err := os.ReadFile(filepath.Join(dir, segment.SidecarFileName(0)))
	if err != nil {
		t.Fatal(err)
	}
	maxHeader := append([]byte{}, valid[:56]...)
	copy(maxHeader[52:56], []byte{0xff, 0xff, 0xff, 0xff})
	seeds := map[string][]byte{
		"empty":              {},
		"max-entries-header": append(maxHeader, 0, 0, 0, 0),
		"valid":              valid,
		"valid-plus-garbage": append(append([]byte{}, valid...), "garbage"...),
	}
	seedDir := filepath.Join("testdata", "fuzz", "FuzzSidecarParse")
	if err := os.MkdirAll(seedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(seedDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
