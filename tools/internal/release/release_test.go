package release

import (
	"archive/zip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The modules of the throwaway repository. Two are enough to see that every
// module gets its tag and that tools comes to require log at the release
// version; tools carries a nested module, as the real one does.
var testModules = []string{"log", "tools"}

const (
	modulePrefix = "github.com/pystream/pystream/"
	// The version every in-repo requirement names before a first release.
	placeholder = "v0.0.0-00010101000000-000000000000"
)

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
			// make test needs them too: a machine that runs it has them.
			t.Fatalf("release tests need %s on PATH (apt-get install git bash golang): %v", tool, err)
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
	// log requires nothing; tools requires log at the placeholder and
	// replaces it with the directory, as the real modules do.
	writeFile(t, filepath.Join(dir, "log", "go.mod"), "module "+modulePrefix+"log\n\ngo 1.26\n")
	writeFile(t, filepath.Join(dir, "log", "doc.go"), "// Package log is a stand-in.\npackage log\n")
	writeFile(t, filepath.Join(dir, "tools", "go.mod"), "module "+modulePrefix+"tools\n\ngo 1.26\n\n"+
		"require "+modulePrefix+"log "+placeholder+"\n\nreplace "+modulePrefix+"log => ../log\n")
	writeFile(t, filepath.Join(dir, "tools", "doc.go"), "// Package tools is a stand-in.\npackage tools\n\nimport _ \""+modulePrefix+"log\"\n")
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

// head is the commit HEAD names.
func (f *fixture) head() string {
	f.t.Helper()
	return f.git("rev-parse", "HEAD")
}

// wantUnchanged checks what a refused release leaves: HEAD still at head
// (no release commit) and a clean working tree (the go.mod files put back).
func (f *fixture) wantUnchanged(head string) {
	f.t.Helper()
	if got := f.head(); got != head {
		f.t.Errorf("HEAD = %s after a refused release, want it unchanged at %s", got, head)
	}
	if st := f.git("status", "--porcelain"); st != "" {
		f.t.Errorf("working tree changed by a refused release:\n%s", st)
	}
}

// wantNothingDone checks what a refusal before gorelease leaves: no tag, HEAD
// still at head, a clean tree, and gorelease never called.
func (f *fixture) wantNothingDone(head string) {
	f.t.Helper()
	f.wantTags()
	f.wantUnchanged(head)
	if calls := f.stubCalls(); len(calls) != 0 {
		f.t.Errorf("gorelease ran %d times, want 0", len(calls))
	}
}

// goModule is what `go mod edit -json` prints of a go.mod, in part.
type goModule struct {
	Require []struct{ Path, Version string }
	Replace []struct {
		Old, New struct{ Path, Version string }
	}
}

// goMod reads module m's go.mod at revision rev.
func (f *fixture) goMod(rev, m string) goModule {
	f.t.Helper()
	path := filepath.Join(f.t.TempDir(), "go.mod")
	writeFile(f.t, path, f.git("show", rev+":"+m+"/go.mod")+"\n")
	out, err := exec.Command("go", "mod", "edit", "-json", path).Output()
	if err != nil {
		f.t.Fatalf("go mod edit -json %s:%s/go.mod: %v", rev, m, err)
	}
	var mod goModule
	if err := json.Unmarshal(out, &mod); err != nil {
		f.t.Fatalf("decoding %s:%s/go.mod: %v", rev, m, err)
	}
	return mod
}

// wantReleaseCommit checks that tag names tools' go.mod requiring log at
// version with its replace line kept, and log's go.mod untouched.
func (f *fixture) wantReleaseCommit(tag, version string) {
	f.t.Helper()
	tools := f.goMod(tag, "tools")
	if len(tools.Require) != 1 || tools.Require[0].Path != modulePrefix+"log" || tools.Require[0].Version != version {
		f.t.Errorf("%s: tools/go.mod requires %v, want only %slog %s", tag, tools.Require, modulePrefix, version)
	}
	if len(tools.Replace) != 1 || tools.Replace[0].Old.Path != modulePrefix+"log" || tools.Replace[0].New.Path != "../log" {
		f.t.Errorf("%s: tools/go.mod replaces %v, want log => ../log kept", tag, tools.Replace)
	}
	if log := f.goMod(tag, "log"); len(log.Require) != 0 || len(log.Replace) != 0 {
		f.t.Errorf("%s: log/go.mod has requirements %v and replacements %v, want none", tag, log.Require, log.Replace)
	}
}

func (f *fixture) wantTags(want ...string) {
	f.t.Helper()
	if got := f.tags(); strings.Join(got, " ") != strings.Join(want, " ") {
		f.t.Fatalf("tags = %q, want %q", got, want)
	}
}

// A release makes one release commit on top of HEAD, in which every module
// requires its in-repo siblings at the release version (so that a tag can be
// fetched from outside) and keeps its replace lines, tags every module there
// with an annotated tag, and leaves the branch on it with a clean tree. It
// runs gorelease in each module's directory; the first release has no base.
func TestReleaseTagsEveryModule(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	start := f.head()
	if !f.release("v0.1.0") {
		t.Fatal("release v0.1.0 refused on a clean tree")
	}
	f.wantTags("log/v0.1.0", "tools/v0.1.0")
	head := f.head()
	if parent := f.git("rev-parse", "HEAD^"); parent != start {
		t.Errorf("release commit's parent = %s, want the commit released from %s", parent, start)
	}
	if st := f.git("status", "--porcelain"); st != "" {
		t.Errorf("working tree not clean after the release:\n%s", st)
	}
	for _, tag := range []string{"log/v0.1.0", "tools/v0.1.0"} {
		f.wantReleaseCommit(tag, "v0.1.0")
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
	start := f.head()
	for _, v := range []string{"", "0.1.0", "v0.1", "v0.1.0-rc.1", "v0.01.0", "v1.2.3 ", "log/v0.1.0", "v2.0.0"} {
		if f.release(v) {
			t.Errorf("release %q succeeded, want refused", v)
		}
	}
	f.wantNothingDone(start)
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
	start := f.head()
	if f.release("v0.1.0") {
		t.Fatal("release v0.1.0 succeeded although tools/v0.1.0 exists")
	}
	f.wantTags("tools/v0.1.0")
	f.wantUnchanged(start)
}

// A version not above a module's latest release is refused.
func TestReleaseRefusesVersionNotAboveLatest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.release("v0.2.0") {
		t.Fatal("release v0.2.0 refused")
	}
	f.commit("later")
	start := f.head()
	if f.release("v0.1.5") {
		t.Fatal("release v0.1.5 succeeded after v0.2.0")
	}
	f.wantTags("log/v0.2.0", "tools/v0.2.0")
	f.wantUnchanged(start)
}

// Failing tests refuse the release before gorelease runs.
func TestReleaseRefusesFailingTests(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	start := f.head()
	if f.release("v0.1.0", "RELEASE_TEST_CMD=false") {
		t.Fatal("release succeeded with failing tests")
	}
	f.wantNothingDone(start)
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
	start := f.head()
	if f.release("v0.1.1", "STUB_SUGGEST=v0.2.0") {
		t.Fatal("release v0.1.1 succeeded although gorelease suggests v0.2.0")
	}
	f.wantTags("log/v0.1.0", "tools/v0.1.0")
	f.wantUnchanged(start)
	if got := f.stubCalls(); len(got) == 0 || got[0] != "log -base=v0.1.0" {
		t.Fatalf("gorelease calls = %q, want the first to be %q", got, "log -base=v0.1.0")
	}
	if !f.release("v0.2.0", "STUB_SUGGEST=v0.2.0") {
		t.Fatal("release v0.2.0 refused although gorelease suggests it")
	}
	f.wantTags("log/v0.1.0", "log/v0.2.0", "tools/v0.1.0", "tools/v0.2.0")
	// The second release moves tools' requirement from v0.1.0 on.
	f.wantReleaseCommit("tools/v0.2.0", "v0.2.0")
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
			start := f.head()
			if got := f.release("v0.1.0", tt.env...); got != tt.ok {
				t.Fatalf("release succeeded = %v, want %v", got, tt.ok)
			}
			if tt.ok {
				f.wantTags("log/v0.1.0", "tools/v0.1.0")
			} else {
				f.wantTags()
				f.wantUnchanged(start)
			}
		})
	}
}

// gorelease is handed a file proxy holding each released module at the
// release version, taken from the release commit (so tools' requirement on
// log@v0.1.1 resolves to the tree being tagged), and each one's latest
// release, zipped as the go command expects: every file under
// <module>@<version>/, nested modules left out. The release version stays
// off the version lists, or gorelease would not compare with the base.
func TestReleaseProxyForGorelease(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.release("v0.1.0") {
		t.Fatal("first release refused")
	}
	f.commit("later")
	proxy := filepath.Join(t.TempDir(), "proxy")
	if !f.release("v0.1.1", "STUB_PROXY_COPY="+proxy) {
		t.Fatal("release v0.1.1 refused")
	}
	for _, mv := range []struct{ module, version string }{
		{"log", "v0.1.1"}, {"tools", "v0.1.1"}, {"log", "v0.1.0"}, {"tools", "v0.1.0"},
	} {
		path := modulePrefix + mv.module
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
		list, err := os.ReadFile(filepath.Join(dir, "list"))
		if err != nil {
			t.Errorf("proxy lacks %s's version list: %v", path, err)
		}
		if listed := strings.Contains(string(list), "v0.1.1"); listed {
			t.Errorf("%s's version list = %q, want the release version left off", path, list)
		}
	}
	mod, err := os.ReadFile(filepath.Join(proxy, modulePrefix+"tools", "@v", "v0.1.1.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := modulePrefix + "log v0.1.1"; !strings.Contains(string(mod), want) {
		t.Errorf("proxy's tools@v0.1.1 go.mod does not require %q:\n%s", want, mod)
	}
}

// A module cannot be released without the in-repo modules it requires: its
// release commit would name versions of them that no tag provides.
func TestReleaseRefusesMissingSibling(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	start := f.head()
	if f.release("v0.1.0", "MODULES=tools") {
		t.Fatal("release of tools alone succeeded although tools requires log")
	}
	f.wantNothingDone(start)
}

// A module that does not build (GOWORK=off) once its go.mod is rewritten
// refuses the release, and the rewritten go.mod files are put back.
func TestReleaseRefusesModuleThatDoesNotBuild(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writeFile(t, filepath.Join(f.dir, "tools", "broken.go"), "package tools\n\nvar x int = \"not an int\"\n")
	f.git("add", ".")
	f.git("commit", "-q", "-m", "broken")
	start := f.head()
	if f.release("v0.1.0") {
		t.Fatal("release succeeded although tools does not build")
	}
	f.wantTags()
	f.wantUnchanged(start)
}

// make release needs VERSION= on its command line: the Makefile's own
// VERSION, from git describe, must never be released. Here git describe
// gives v0.3.0, which the release script would accept.
func TestMakeReleaseWithoutVersion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("this test needs make on PATH (apt-get install make): %v", err)
	}
	f := newFixture(t)
	_, thisFile, _, _ := runtime.Caller(0)
	makefile := filepath.Join(filepath.Dir(thisFile), "..", "..", "..", "Makefile")
	f.git("tag", "v0.3.0")
	start := f.head()
	var env []string // without a VERSION the test's own environment may hold
	for _, kv := range f.env {
		if !strings.HasPrefix(kv, "VERSION=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command("make", "-s", "-f", makefile, "release", "MODULES=log tools")
	cmd.Dir = f.dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	t.Logf("make release:\n%s", out)
	if err == nil {
		t.Fatal("make release without VERSION= succeeded")
	}
	f.wantTags("v0.3.0")
	f.wantUnchanged(start)
	cmd = exec.Command("make", "-s", "-f", makefile, "release", "MODULES=log tools", "VERSION=v0.3.1")
	cmd.Dir = f.dir
	cmd.Env = f.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release VERSION=v0.3.1: %v\n%s", err, out)
	}
	f.wantTags("log/v0.3.1", "tools/v0.3.1", "v0.3.0")
}
