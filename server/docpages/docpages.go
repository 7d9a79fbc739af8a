// Package docpages serves PyStream's documentation pages (the docs
// module: docs/*.md, built into the binary) as HTML, at
// /docs/pages/{name} — so that the explorer's links to the rule behind a
// journal entry work offline, from the server the page came from.
//
// Each page is rendered from its Markdown once per process, on first use,
// by goldmark (CommonMark with GitHub's tables, strikethrough and
// autolinks; raw HTML in a page is not passed through). Every heading gets
// the id docs.Anchor gives it — GitHub's — so that a link to a page's
// heading leads to the same heading here and on GitHub. A relative link to
// another page stays relative and so stays on this server; a relative
// link to any other file of the repository (source code, a script) leads
// to the repository, since the binary holds only the pages.
//
// The pages have no script. Their CSP allows their one inline style
// sheet, by its hash, and nothing else.
package docpages

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/pystream/pystream/docs"
)

// Prefix is the path under which the pages are served: Prefix + "/" +
// the page's file name.
const Prefix = "/docs/pages"

// Repository is where a relative link to a file that is not a page leads:
// the file in the repository, on its main branch.
const Repository = "https://github.com/pystream/pystream/blob/main/"

// ErrNoPage is returned for a name that is no page.
var ErrNoPage = errors.New("docpages: no such page")

// Heading is one heading of a page.
type Heading struct {
	Level int
	// Text is the heading as it reads, without Markdown.
	Text string
	// ID is its anchor (docs.Anchors).
	ID string
}

// Page is one rendered page.
type Page struct {
	// Name is the file name, such as docs/phase-5-failover.md's.
	Name string
	// Title is the text of its first heading.
	Title    string
	Headings []Heading
	// HTML is the whole document, as served.
	HTML []byte
}

// Site is every page of a file system, rendered. It is safe for
// concurrent use once built.
type Site struct {
	pages map[string]*Page
	names []string
	index []byte
}

// style is the pages' one style sheet, inline, allowed by its hash.
const style = `body{margin:0;font:16px/1.55 system-ui,sans-serif;color:#1b1f24;background:#fff}
nav{padding:.5rem 1rem;border-bottom:1px solid #d0d7de;font-size:.9rem}
main{max-width:52rem;padding:0 1rem 3rem;margin:0 auto;overflow-wrap:break-word}
h1{font-size:1.6rem}h2{font-size:1.3rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}h3{font-size:1.1rem}
a{color:#0550ae}pre{background:#f6f8fa;padding:.6rem .8rem;overflow:auto;border-radius:6px}
code{font-size:.9em;background:#f6f8fa;padding:0 .2em;border-radius:3px}pre code{padding:0}
table{border-collapse:collapse;display:block;overflow:auto}th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
:target{background:#fff8c5}`

// CSP is the pages' Content-Security-Policy: their inline style sheet,
// by hash; no script; nothing loaded from elsewhere.
var CSP = func() string {
	sum := sha256.Sum256([]byte(style))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src 'self' data:; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

var shell = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — PyStream documentation</title>
<link rel="icon" href="data:,">
<style>{{.Style}}</style>
</head>
<body>
<nav><a href="` + Prefix + `">All pages</a> · <a href="/docs">API documentation</a> · <a href="/explorer">Explorer</a>{{if .Name}} · {{.Name}}{{end}}</nav>
<main>
{{.Body}}
</main>
</body>
</html>
`))

// New renders every *.md page of fsys.
func New(fsys fs.FS) (*Site, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, fmt.Errorf("docpages: %w", err)
	}
	s := &Site{pages: map[string]*Page{}, names: names}
	for _, name := range names {
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("docpages: %w", err)
		}
		p, err := render(name, src, s.isPage)
		if err != nil {
			return nil, err
		}
		s.pages[name] = p
	}
	var list bytes.Buffer
	list.WriteString("<h1>PyStream documentation</h1>\n<p>Every page of the repository's <code>docs/</code>, as this server holds them.</p>\n<ul>\n")
	for _, name := range names {
		fmt.Fprintf(&list, "<li><a href=\"%s/%s\">%s</a> — %s</li>\n", Prefix, template.HTMLEscapeString(name),
			template.HTMLEscapeString(s.pages[name].Title), template.HTMLEscapeString(name))
	}
	list.WriteString("</ul>\n")
	s.index, err = document("All pages", "", list.Bytes())
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Default is the docs module's pages, rendered on first use.
var Default = sync.OnceValues(func() (*Site, error) { return New(docs.Pages) })

// Names lists the pages, ascending.
func (s *Site) Names() []string { return slices.Clone(s.names) }

// Page is the page named name (the file name, as docs/design.md's).
func (s *Site) Page(name string) (*Page, error) {
	p, ok := s.pages[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoPage, name)
	}
	return p, nil
}

func (s *Site) isPage(name string) bool {
	return slices.Contains(s.names, name)
}

// ServeIndex answers GET /docs/pages: the list of pages.
func (s *Site) ServeIndex(w http.ResponseWriter, r *http.Request) {
	serve(w, r, s.index)
}

// ServePage answers GET /docs/pages/{name}. It returns ErrNoPage, having
// written nothing, for a name that is no page: the caller answers it.
func (s *Site) ServePage(w http.ResponseWriter, r *http.Request, name string) error {
	p, err := s.Page(name)
	if err != nil {
		return err
	}
	serve(w, r, p.HTML)
	return nil
}

func serve(w http.ResponseWriter, r *http.Request, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	_, _ = w.Write(body) // the client going away is not our error
}

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// render turns one page into HTML: every heading with its anchor, every
// relative link to a file that is no page turned into a link to the
// repository.
func render(name string, src []byte, isPage func(string) bool) (*Page, error) {
	doc := md.Parser().Parse(text.NewReader(src))
	p := &Page{Name: name}
	var anchors docs.Anchors
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			t := plainText(n, src)
			h := Heading{Level: n.Level, Text: t, ID: anchors.Next(t)}
			n.SetAttributeString("id", []byte(h.ID))
			p.Headings = append(p.Headings, h)
			if p.Title == "" {
				p.Title = t
			}
		case *ast.Link:
			n.Destination = []byte(linkTarget(string(n.Destination), isPage))
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("docpages: %s: %w", name, err)
	}
	var body bytes.Buffer
	if err := md.Renderer().Render(&body, src, doc); err != nil {
		return nil, fmt.Errorf("docpages: render %s: %w", name, err)
	}
	if p.Title == "" {
		p.Title = name
	}
	p.HTML, err = document(p.Title, name, body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("docpages: %s: %w", name, err)
	}
	return p, nil
}

func document(title, name string, body []byte) ([]byte, error) {
	var out bytes.Buffer
	err := shell.Execute(&out, struct {
		Title, Name string
		Style       template.CSS
		Body        template.HTML
	}{title, name, template.CSS(style), template.HTML(body)})
	return out.Bytes(), err
}

// plainText is a heading's text as it reads: its text and code spans,
// without the Markdown around them.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// linkTarget is where a page's link leads when served: unchanged when it
// is absolute, an anchor of the page itself, or another page by its file
// name (an anchor after it or not); else, for a relative path, that file in the
// repository (the pages live in its docs/ directory).
func linkTarget(dest string, isPage func(string) bool) string {
	if dest == "" || strings.HasPrefix(dest, "#") || strings.HasPrefix(dest, "/") || strings.Contains(dest, "://") ||
		strings.HasPrefix(dest, "mailto:") {
		return dest
	}
	file, frag, _ := strings.Cut(dest, "#")
	if !strings.Contains(path.Clean(file), "/") && isPage(path.Clean(file)) {
		return dest
	}
	target := path.Clean("docs/" + file)
	if strings.HasPrefix(target, "../") {
		return dest // outside the repository: left as written
	}
	if frag != "" {
		target += "#" + frag
	}
	return Repository + target
}
