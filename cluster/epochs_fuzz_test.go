package cluster

import (
	"errors"
	"slices"
	"testing"
)

// The leader-epoch fuzzers hold the history's two decoders to the
// invariants every decoder of PyStream is held to: no input panics; a
// refusal wraps ErrInvalidArgument; what parses is a valid history
// (ValidateEpochRuns) and re-encodes to a form that parses to the same
// runs and encodes the same again. Their seed corpora are in
// testdata/fuzz/.

func FuzzParseEpochsFile(f *testing.F) {
	f.Add(EncodeEpochsFile(nil))
	f.Add(EncodeEpochsFile([]EpochRun{epA, epB, epC}))
	f.Add(EncodeEpochsFile([]EpochRun{{Start: 0}, at(epA, 4)}))
	f.Add([]byte("pystream leader epochs 1\n3:9F2C1A0B3D4E5F60:007\n"))
	f.Add([]byte("pystream leader epochs 1\n3:9f2c1a0b3d4e5f6:0\n"))
	f.Add([]byte("pystream leader epochs 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		runs, err := ParseEpochsFile(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		checkParsedRuns(t, runs)
		enc := EncodeEpochsFile(runs)
		again, err := ParseEpochsFile(enc)
		if err != nil {
			t.Fatalf("encoded history does not parse: %v\n%q", err, enc)
		}
		if !slices.Equal(runs, again) {
			t.Fatalf("runs changed in a round trip: %v, then %v", runs, again)
		}
		if enc2 := EncodeEpochsFile(again); string(enc) != string(enc2) {
			t.Fatalf("encoding not stable:\n%q\n%q", enc, enc2)
		}
	})
}

func FuzzParseEpochRuns(f *testing.F) {
	f.Add("")
	f.Add(FormatEpochRuns([]EpochRun{epA}))
	f.Add(FormatEpochRuns([]EpochRun{epA, epB, epC}))
	f.Add(FormatEpochRuns([]EpochRun{{Start: 0}, at(epA, 4), {Start: 9}}))
	f.Add("3:9f2c1a0b3d4e5f60:0,")
	f.Add("18446744073709551615:ffffffffffffffff:18446744073709551615")
	f.Fuzz(func(t *testing.T, s string) {
		runs, err := ParseEpochRuns(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		checkParsedRuns(t, runs)
		enc := FormatEpochRuns(runs)
		again, err := ParseEpochRuns(enc)
		if err != nil {
			t.Fatalf("formatted runs do not parse: %v\n%q", err, enc)
		}
		if !slices.Equal(runs, again) {
			t.Fatalf("runs changed in a round trip: %v, then %v", runs, again)
		}
		if enc2 := FormatEpochRuns(again); enc != enc2 {
			t.Fatalf("format not stable:\n%q\n%q", enc, enc2)
		}
		// Both forms carry the same runs.
		file, err := ParseEpochsFile(EncodeEpochsFile(runs))
		if err != nil || !slices.Equal(file, runs) {
			t.Fatalf("the file form of %v reads as %v (%v)", runs, file, err)
		}
	})
}

// checkParsedRuns fails unless runs, just parsed, are a valid history.
func checkParsedRuns(t *testing.T, runs []EpochRun) {
	t.Helper()
	if err := ValidateEpochRuns(runs); err != nil {
		t.Fatalf("parsed runs are not a valid history: %v", err)
	}
	for i, r := range runs {
		if got := runAt(runs, r.Start); got != r {
			t.Fatalf("run %d (%v) does not hold its own start: %v", i, r, got)
		}
	}
}
