package docpages_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/docs"
	"github.com/pystream/pystream/server/docpages"
)

// Every heading of every page is rendered with the id docs.Anchor gives
// it, unique within its page, so that a link to the heading lands on it
// here as on GitHub.
// md is a page's file name.
func md(base string) string { return base + ".md" }

func TestDocPagesHeadingIDs(t *testing.T) {
	site, err := docpages.Default()
	require.NoError(t, err)
	require.Contains(t, site.Names(), md("phase-5-failover"))
	for _, name := range site.Names() {
		p, err := site.Page(name)
		require.NoError(t, err)
		require.NotEmpty(t, p.Headings, name)
		seen := map[string]bool{}
		for _, h := range p.Headings {
			require.False(t, seen[h.ID], "%s: id %q twice", name, h.ID)
			seen[h.ID] = true
			require.True(t, h.ID == docs.Anchor(h.Text) || strings.HasPrefix(h.ID, docs.Anchor(h.Text)+"-"), "%s: %q has id %q", name, h.Text, h.ID)
			require.Contains(t, string(p.HTML), `id="`+h.ID+`"`, "%s: %q", name, h.Text)
		}
	}
	p, err := site.Page(md("phase-5-failover"))
	require.NoError(t, err)
	require.Contains(t, string(p.HTML), `<h2 id="recovery-step-by-step">Recovery, step by step</h2>`)
	_, err = site.Page(md("nope"))
	require.ErrorIs(t, err, docpages.ErrNoPage)
}

// A page's links to other pages stay relative, on the server that serves
// it; a link to another file of the repository leads to the repository;
// raw HTML in a page is not passed through; headings in code and
// emphasis read as text.
func TestDocPagesLinksAndHTML(t *testing.T) {
	site, err := docpages.New(fstest.MapFS{
		md("a"): {Data: []byte("# The **a** page\n\n## Consume — `GET /x`\n\n[b](" + md("b") + "#top) [self](#x) [code](../server/doc.go) " +
			"[ex](examples/onelayer/main.go) [web](https://example.com/) [out](../../etc/passwd)\n\n<script>alert(1)</script>\n")},
		md("b"): {Data: []byte("# B\n")},
	})
	require.NoError(t, err)
	p, err := site.Page(md("a"))
	require.NoError(t, err)
	html := string(p.HTML)
	require.Equal(t, "The a page", p.Title)
	require.Equal(t, "consume--get-x", p.Headings[1].ID)
	for _, want := range []string{`href="` + md("b") + `#top"`, `href="#x"`, `href="` + docpages.Repository + `server/doc.go"`,
		`href="` + docpages.Repository + `docs/examples/onelayer/main.go"`, `href="https://example.com/"`, `href="../../etc/passwd"`} {
		require.Contains(t, html, want)
	}
	require.NotContains(t, html, "<script>")
}

// The pages are served with a CSP that allows no script, and their one
// style sheet by its hash; an unknown page is ErrNoPage, with nothing
// written.
func TestDocPagesServe(t *testing.T) {
	site, err := docpages.Default()
	require.NoError(t, err)
	w := httptest.NewRecorder()
	require.NoError(t, site.ServePage(w, httptest.NewRequest(http.MethodGet, "/docs/pages/"+md("design"), nil), md("design")))
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, docpages.CSP, w.Header().Get("Content-Security-Policy"))
	require.NotContains(t, docpages.CSP, "script-src")
	require.Contains(t, docpages.CSP, "default-src 'none'")
	require.Contains(t, w.Body.String(), `id="the-controllers-rules"`)

	w = httptest.NewRecorder()
	err = site.ServePage(w, httptest.NewRequest(http.MethodGet, "/docs/pages/"+md("x"), nil), md("x"))
	require.True(t, errors.Is(err, docpages.ErrNoPage))
	require.Zero(t, w.Body.Len())

	w = httptest.NewRecorder()
	site.ServeIndex(w, httptest.NewRequest(http.MethodGet, "/docs/pages", nil))
	require.Contains(t, w.Body.String(), `href="/docs/pages/`+md("phase-5-failover")+`"`)
}
