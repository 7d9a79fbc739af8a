// Package docs holds PyStream's documentation pages — one per phase, the
// design decisions, the explorer, the CLI (README.md is their index) — so
// that a program can serve them: the server renders them at
// /docs/pages/{name}, which the explorer's rule links lead to, and which
// work offline because the pages are built into the binary.
//
// The pages are the Markdown files beside this file, and nothing else: a
// page is written once, here, and read on GitHub, in a checkout and from a
// running server alike. Anchor is the one rule that turns a heading into
// the id a link to it names.
package docs

import (
	"embed"
	"io/fs"
	"strconv"
	"strings"
	"unicode"
)

//go:embed *.md
var pages embed.FS

// Pages is every page, by file name ("phase-5-failover.md"), at the root
// of the file system. It is safe for concurrent use.
var Pages fs.FS = pages

// Anchor is the id of a heading with the text heading, as GitHub makes
// it: lower case, every character but a letter, a digit, '_', '-' and
// the space dropped, each space then turned into '-'. "Recovery, step by
// step" is "recovery-step-by-step"; "Consume — `GET`" (the backquotes
// already gone, as in the rendered text) is "consume--get". A second
// heading with the same text gets "-1" added, a third "-2" (see Anchors).
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Anchors gives each of a page's headings, in order, its id: Anchor,
// with "-1", "-2", ... added to repeats, as GitHub does. Not safe for
// concurrent use; one per page.
type Anchors struct {
	seen map[string]bool
}

// Next is the id of the page's next heading, whose text is heading.
func (a *Anchors) Next(heading string) string {
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	base := Anchor(heading)
	id := base
	for n := 1; a.seen[id]; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	a.seen[id] = true
	return id
}
