package release

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The modules of the throwaway repository. Two are enough to see that every
// module gets its tag; tools carries a nested module, as the real one does.
var testModules = []string{"log", "tools"}

// fixture is a throwaway git repository holding a copy of .ci/release and
// one go.mod per module, with a gorelease stub.
type fixture struct {
	t       *testing.T
	dir     string
	stubLog string
	env     []string
}

// newFixture builds the repository with one commit.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	for _, tool := range []string{"git", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("release tests need %s: %v", tool, err)
		}
	}
	_, thisFile, _, _ := runtime.Caller(0)
	script, err := os.ReadFile(filepath.Join(filepath.Dir(thisFile), "..", "..", "..", ".ci", "release"))
	if err != nil {
		t.Fatalf("reading .ci/release: %v", err)
	}

	dir := t.TempDir()
	stubDir := t.TempDir()
	f := &fixture{t: t, dir: dir, stubLog: filepath.Join(stubDir, "calls")}
	// The stub prints what gorelease prints: an optional diagnostics block
	// (STUB_DIAGNOSTIC) and a summary with STUB_SUGGEST as its suggestion
	// (none when empty). It records its directory and arguments, and copies
	// the file proxy the script gives it to STUB_PROXY_COPY when set.
	stub := filepath.Join(stubDir, "gorelease")
	writeFile(t, stub, `#!/usr/bin/env bash
echo "$(basename "$PWD") $*" >>"$STUB_LOG"
if [[ -n $STUB_PROXY_COPY ]]; then p=${GOPROXY%%,*}; cp -r "${p#file://}" "$STUB_PROXY_COPY"; fi
if [[ -n $STUB_DIAGNOSTIC ]]; then printf '# diagnostics\n%s\n\n' "$STUB_DIAGNOSTIC"; fi
echo "# summary"
if [[ -n $STUB_SUGGEST ]]; then echo "Suggested version: $STUB_SUGGEST (with tag $(basename "$PWD")/$STUB_SUGGEST)"; fi
`)
	if err := os.Chmod(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	f.env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Release Test", "GIT_AUTHOR_EMAIL=release@example.com",
		"GIT_COMMITTER_NAME=Release Test", "GIT_COMMITTER_EMAIL=release@example.com",
		"MODULES="+strings.Join(testModules, " "),
		"RELEASE_TEST_CMD=true",
		"RELEASE_GORELEASE_CMD="+stub,
		"STUB_LOG="+f.stubLog,
		"STUB_SUGGEST=v0.1.0",
		"STUB_DIAGNOSTIC=",
		"STUB_PROXY_COPY=",
	)

	writeFile(t, filepath.Join(dir, ".ci", "release"), string(script))
	for _, m := range testModules {
		writeFile(t, filepath.Join(dir, m, "go.mod"), "module github.com/pystream/pystream/"+m+"\n\ngo 1.26\n")
		writeFile(t, filepath.Join(dir, m, "doc.go"), "// Package "+m+" is a stand-in.\npackage "+m+"\n")
	}
	writeFile(t, filepath.Join(dir, "tools", "peerbench", "go.mod"), "module example.com/peerbench\n\ngo 1.26\n")
	f.git("init", "-q")
	f.git("add", ".")
	f.git("commit", "-q", "-m", "first")
	return f
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// git runs git in the repository and returns its trimmed output.
func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = f.dir
	cmd.Env = f.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit changes a file and commits it, so the next release has a new commit.
func (f *fixture) commit(msg string) {
	f.t.Helper()
	writeFile(f.t, filepath.Join(f.dir, "log", "change.go"), "package log\n\n// "+msg+"\n")
	f.git("add", ".")
	f.git("commit", "-q", "-m", msg)
}

// release runs the script with version and extra environment variables and
// reports whether it succeeded.
func (f *fixture) release(version string, env ...string) bool {
	f.t.Helper()
	cmd := exec.Command("bash", ".ci/release", version)
	cmd.Dir = f.dir
	cmd.Env = append(append([]string{}, f.env...), env...)
	out, err := cmd.CombinedOutput()
	f.t.Logf("release %s:\n%s", version, out)
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			f.t.Fatalf("running .ci/release: %v", err)
		}
		return false
	}
	return true
}

// tags lists the repository's tags, sorted.
func (f *fixture) tags() []string {
	f.t.Helper()
	out := f.git("tag", "--list")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// stubCalls lists the stub's recorded calls, one "<module dir> <args>" each.
func (f *fixture) stubCalls() []string {
	f.t.Helper()
	b, err := os.ReadFile(f.stubLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func (f *fixture) wantTags(want ...string) {
	f.t.Helper()
	if got := f.tags(); strings.Join(got, " ") != strings.Join(want, " ") {
		f.t.Fatalf("tags = %q, want %q", got, want)
	}
}

// A release tags every module at the same version with an annotated tag on
// HEAD, and runs gorelease in each module's directory; the first release has
// no base to compare with.
func TestReleaseTagsEveryModule(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.release("v0.1.0") {
		t.Fatal("release v0.1.0 refused on a clean tree")
	}
	f.wantTags("log/v0.1.0", "tools/v0.1.0")
	head := f.git("rev-parse", "HEAD")
	for _, tag := range []string{"log/v0.1.0", "tools/v0.1.0"} {
		if typ := f.git("cat-file", "-t", tag); typ != "tag" {
			t.Errorf("%s is a %s, want an annotated tag", tag, typ)
		}
		if at := f.git("rev-list", "-n", "1", tag); at != head {
			t.Errorf("%s points at %s, want HEAD %s", tag, at, head)
		}
	}
	want := []string{"log -base=none", "tools -base=none"}
	if got := f.stubCalls(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gorelease calls = %q, want %q", got, want)
	}
}

// Only vX.Y.Z is a release version, and major versions above 1 are refused
// (they need a /vN module path). Nothing is tagged and gorelease never runs.
func TestReleaseRefusesMalformedVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, v := range []string{"", "0.1.0", "v0.1", "v0.1.0-rc.1", "v0.01.0", "v1.2.3 ", "log/v0.1.0", "v2.0.0"} {
		if f.release(v) {
			t.Errorf("release %q succeeded, want refused", v)
		}
	}
	f.wantTags()
	if calls := f.stubCalls(); len(calls) != 0 {
		t.Errorf("gorelease ran %d times, want 0", len(calls))
	}
}

// A change to a tracked file or an untracked file both refuse the release.
func TestReleaseRefusesDirtyTree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writeFile(t, filepath.Join(f.dir, "log", "doc.go"), "// Package log changed.\npackage log\n")
	if f.release("v0.1.0") {
		t.Fatal("release succeeded with a modified file")
	}
	f.git("checkout", "--", "log/doc.go")
	writeFile(t, filepath.Join(f.dir, "notes.txt"), "untracked\n")
	if f.release("v0.1.0") {
		t.Fatal("release succeeded with an untracked file")
	}
	f.wantTags()
}

// A version one module already has is refused, and the other modules are not
// tagged either: the release is all or nothing.
func TestReleaseRefusesExistingTag(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.git("tag", "-a", "-m", "earlier", "tools/v0.1.0")
	if f.release("v0.1.0") {
		t.Fatal("release v0.1.0 succeeded although tools/v0.1.0 exists")
	}
	f.wantTags("tools/v0.1.0")
}

// A version not above a module's latest release is refused.
func TestReleaseRefusesVersionNotAboveLatest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.release("v0.2.0") {
		t.Fatal("release v0.2.0 refused")
	}
	f.commit("later")
	if f.release("v0.1.5") {
		t.Fatal("release v0.1.5 succeeded after v0.2.0")
	}
	f.wantTags("log/v0.2.0", "tools/v0.2.0")
}

// Failing tests refuse the release before gorelease runs.
func TestReleaseRefusesFailingTests(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if f.release("v0.1.0", "RELEASE_TEST_CMD=false") {
		t.Fatal("release succeeded with failing tests")
	}
	f.wantTags()
	if calls := f.stubCalls(); len(calls) != 0 {
		t.Errorf("gorelease ran %d times, want 0", len(calls))
	}
}

// Against an earlier release, gorelease compares with that module's latest
// tag, and a version below its suggestion is refused: under v0 an
// incompatible change needs a new minor version, not a patch.
func TestReleaseRefusesVersionBelowGoreleaseSuggestion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.release("v0.1.0") {
		t.Fatal("first release refused")
	}
	f.commit("incompatible change")
	if err := os.Remove(f.stubLog); err != nil {
		t.Fatal(err)
	}
	if f.release("v0.1.1", "STUB_SUGGEST=v0.2.0") {
		t.Fatal("release v0.1.1 succeeded although gorelease suggests v0.2.0")
	}
	f.wantTags("log/v0.1.0", "tools/v0.1.0")
	if got := f.stubCalls(); len(got) == 0 || got[0] != "log -base=v0.1.0" {
		t.Fatalf("gorelease calls = %q, want the first to be %q", got, "log -base=v0.1.0")
	}
	if !f.release("v0.2.0", "STUB_SUGGEST=v0.2.0") {
		t.Fatal("release v0.2.0 refused although gorelease suggests it")
	}
	f.wantTags("log/v0.1.0", "log/v0.2.0", "tools/v0.1.0", "tools/v0.2.0")
}

// A version above the suggestion is accepted: a patch-level change may still
// be released as a new minor version.
func TestReleaseAcceptsVersionAboveGoreleaseSuggestion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.release("v0.1.0") {
		t.Fatal("first release refused")
	}
	f.commit("fix")
	if !f.release("v0.2.0", "STUB_SUGGEST=v0.1.1") {
		t.Fatal("release v0.2.0 refused although gorelease suggests only v0.1.1")
	}
	f.wantTags("log/v0.1.0", "log/v0.2.0", "tools/v0.1.0", "tools/v0.2.0")
}

// gorelease finding a problem (a diagnostic, or no version it can suggest
// because a package has errors) refuses the release. The one diagnostic
// that replace lines always cause, missing go.sum lines, does not.
func TestReleaseGoreleaseProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  []string
		ok   bool
	}{
		{"no suggestion", []string{"STUB_SUGGEST="}, false},
		{"diagnostic", []string{"STUB_DIAGNOSTIC=go.mod: requirement on a retracted version"}, false},
		{"missing go.sum lines", []string{"STUB_DIAGNOSTIC=go.sum: one or more sums are missing. Run 'go mod tidy' to add missing sums."}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if got := f.release("v0.1.0", tt.env...); got != tt.ok {
				t.Fatalf("release succeeded = %v, want %v", got, tt.ok)
			}
			if tt.ok {
				f.wantTags("log/v0.1.0", "tools/v0.1.0")
			} else {
				f.wantTags()
			}
		})
	}
}

// gorelease is handed a file proxy holding every in-repo module at the
// placeholder version (also those not being released: requirements reach
// them) and each released module's latest release, zipped as the go command
// expects: every file under <module>@<version>/, nested modules left out.
func TestReleaseProxyForGorelease(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.release("v0.1.0") {
		t.Fatal("first release refused")
	}
	f.commit("later")
	proxy := filepath.Join(t.TempDir(), "proxy")
	if !f.release("v0.1.1", "MODULES=log", "STUB_PROXY_COPY="+proxy) {
		t.Fatal("release v0.1.1 of log refused")
	}
	const placeholder = "v0.0.0-00010101000000-000000000000"
	for _, mv := range []struct{ module, version string }{
		{"log", placeholder}, {"tools", placeholder}, {"log", "v0.1.0"},
	} {
		path := "github.com/pystream/pystream/" + mv.module
		dir := filepath.Join(proxy, path, "@v")
		for _, ext := range []string{".info", ".mod", ".zip"} {
			if _, err := os.Stat(filepath.Join(dir, mv.version+ext)); err != nil {
				t.Errorf("proxy lacks %s@%s%s: %v", path, mv.version, ext, err)
			}
		}
		zr, err := zip.OpenReader(filepath.Join(dir, mv.version+".zip"))
		if err != nil {
			t.Errorf("opening %s@%s.zip: %v", path, mv.version, err)
			continue
		}
		sawGoMod := false
		for _, zf := range zr.File {
			if !strings.HasPrefix(zf.Name, path+"@"+mv.version+"/") {
				t.Errorf("%s@%s.zip holds %s, outside the module's prefix", path, mv.version, zf.Name)
			}
			if strings.Contains(zf.Name, "peerbench") {
				t.Errorf("%s@%s.zip holds %s, from a nested module", path, mv.version, zf.Name)
			}
			sawGoMod = sawGoMod || zf.Name == path+"@"+mv.version+"/go.mod"
		}
		zr.Close()
		if !sawGoMod {
			t.Errorf("%s@%s.zip has no go.mod at its root", path, mv.version)
		}
	}
	if _, err := os.Stat(filepath.Join(proxy, "github.com/pystream/pystream/tools/@v/v0.1.0.zip")); err == nil {
		t.Error("proxy holds tools@v0.1.0, but tools is not being released")
	}
}
