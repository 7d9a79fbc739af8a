package docs_test

import (
	"fmt"
	"io/fs"
	"testing"

	"github.com/pystream/pystream/docs"
)

// Headings become the ids GitHub gives them, so that a link to a
// page's heading leads to the same heading on GitHub and on the server.
func TestDocsAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Recovery, step by step":                                     "recovery-step-by-step",
		"Why unacknowledged records can be lost, and offsets reused": "why-unacknowledged-records-can-be-lost-and-offsets-reused",
		"Consume — GET /api/topics/{topic}":                          "consume--get-apitopicstopic",
		"The controller's rules":                                     "the-controllers-rules",
		"PYSTREAM_FAILOVER_AFTER: 0 is manual":                       "pystream_failover_after-0-is-manual",
		"Phase 4 — Replication":                                      "phase-4--replication",
		"Écrire":                                                     "écrire",
	} {
		if got := docs.Anchor(heading); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// A repeated heading gets "-1", then "-2", as GitHub numbers them.
func TestDocsAnchorsRepeat(t *testing.T) {
	var a docs.Anchors
	got := []string{a.Next("Tests"), a.Next("Tests"), a.Next("Tests-1"), a.Next("Tests")}
	want := []string{"tests", "tests-1", "tests-1-1", "tests-2"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ids %v, want %v", got, want)
		}
	}
}

// Every page of the directory is embedded, the index among them.
func TestDocsPages(t *testing.T) {
	names, err := fs.Glob(docs.Pages, "*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", "design.md", "explorer.md", "phase-5-failover.md"} {
		if _, err := fs.Stat(docs.Pages, want); err != nil {
			t.Errorf("%s: %v (pages: %v)", want, err, names)
		}
	}
}

func ExampleAnchor() {
	fmt.Println(docs.Anchor("Candidate selection and safety checks"))
	// Output: candidate-selection-and-safety-checks
}
