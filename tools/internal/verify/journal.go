package verify

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/log/wal"
)

// journal is a broker's commit journal as replay would use it: every
// generation file, oldest first, read with wal.ScanGeneration, and the
// writes replay would put back into each file
// (docs/design.md § The commit journal).
type journal struct {
	// gens are the generation files by path.
	gens map[string]*generation
	// pending holds, by absolute path, the writes replay makes to each
	// file, in the order it makes them.
	pending map[string][]wal.Write
}

// generation is one generation file and what replay does with it.
type generation struct {
	size int64
	scan wal.Scan
	// writes counts the writes replay makes from it, to the files in
	// files (by absolute path).
	writes int
	files  map[string]bool
	// aside says why replay keeps the file aside rather than removing it;
	// none when it removes it.
	aside []string
	// err is a failure to read the file, or one that stops a replay.
	err error
}

// isJournalFile reports whether p is a generation file of a commit
// journal, or one replay set aside: a file in a directory named
// wal.DirName, named as the journal names its files.
func isJournalFile(p string) (aside, ok bool) {
	if filepath.Base(filepath.Dir(p)) != wal.DirName {
		return false, false
	}
	name := filepath.Base(p)
	if _, ok := wal.ParseGenerationFileName(name); ok {
		return false, true
	}
	if i := strings.Index(name, wal.AsideSuffix); i > 0 {
		if _, ok := wal.ParseGenerationFileName(name[:i]); ok {
			return true, true
		}
	}
	return false, false
}

// journal returns the commit journal of the broker whose directory is
// brokerDir, read once.
func (v *verifier) journal(brokerDir string) *journal {
	if j, ok := v.journals[brokerDir]; ok {
		return j
	}
	j := readJournal(brokerDir)
	v.journals[brokerDir] = j
	return j
}

// readJournal reads the journal under brokerDir as the broker's replay
// does: generations in order of their numbers, each scanned by
// wal.ScanGeneration and planned by wal.PlanReplay with the broker's rule
// (cluster.JournaledFile), so that what it keeps aside and what it writes
// are replay's own decisions.
func readJournal(brokerDir string) *journal {
	j := &journal{gens: map[string]*generation{}, pending: map[string][]wal.Write{}}
	dir := filepath.Join(brokerDir, wal.DirName)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return j
	}
	type numbered struct {
		n    uint64
		path string
	}
	var gens []numbered
	for _, e := range entries {
		if n, ok := wal.ParseGenerationFileName(e.Name()); ok {
			gens = append(gens, numbered{n, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(gens, func(a, b numbered) int {
		switch {
		case a.n < b.n:
			return -1
		case a.n > b.n:
			return 1
		}
		return 0
	})
	states := map[string]error{}
	state := func(abs string) error {
		if err, ok := states[abs]; ok {
			return err
		}
		info, err := os.Stat(abs)
		if err == nil && info.IsDir() {
			err = &fs.PathError{Op: "open", Path: abs, Err: syscall.EISDIR}
		}
		states[abs] = err
		return err
	}
	for _, ng := range gens {
		g := &generation{files: map[string]bool{}}
		j.gens[ng.path] = g
		data, err := readRegular(ng.path)
		if err != nil {
			g.err = fmt.Errorf("cannot read: %w; the broker cannot replay its journal", err)
			continue
		}
		g.size = int64(len(data))
		g.scan = wal.ScanGeneration(data, ng.n)
		if g.scan.Unfinished {
			continue
		}
		plan := wal.PlanReplay(g.scan, brokerDir, func(abs string) bool { return cluster.JournaledFile(brokerDir, abs) }, state)
		g.aside = plan.Aside
		if plan.Err != nil {
			g.err = fmt.Errorf("%w; the broker cannot replay its journal", plan.Err)
			continue
		}
		for _, w := range plan.Writes {
			abs := filepath.Join(brokerDir, filepath.FromSlash(w.Path))
			j.pending[abs] = append(j.pending[abs], w)
			g.writes++
			g.files[abs] = true
		}
	}
	return j
}

// readRegular reads the regular file at p whole.
func readRegular(p string) ([]byte, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return os.ReadFile(p)
}

// checkJournal judges a generation file of a broker's commit journal. It
// is not damage by itself: the broker replays it when it opens. What
// replay would keep aside is said in the detail.
func (v *verifier) checkJournal(p string) {
	g := v.journal(filepath.Dir(filepath.Dir(p))).gens[p]
	if g == nil {
		v.add(p, Item{Status: StatusDamaged, Kind: KindCommitJournal, Detail: "not a generation file replay can read"})
		return
	}
	if g.err != nil {
		v.add(p, Item{Status: StatusDamaged, Kind: KindCommitJournal, Detail: g.err.Error()})
		return
	}
	if g.scan.Unfinished {
		v.add(p, Item{Status: StatusOK, Kind: KindCommitJournal, Detail: fmt.Sprintf("%d bytes: a generation whose creation was cut short, holding nothing; replay removes it", g.size)})
		return
	}
	var detail string
	if g.writes == 0 {
		detail = "holds no write to replay"
	} else {
		detail = fmt.Sprintf("%d writes to %d files not yet replayed: the broker replays them when it opens, before it reads those files", g.writes, len(g.files))
	}
	for _, why := range g.aside {
		detail += "; " + why
	}
	if len(g.aside) > 0 {
		detail += "; replay keeps the file aside"
	} else {
		detail += "; replay removes it"
	}
	v.add(p, Item{Status: StatusOK, Kind: KindCommitJournal, Detail: detail})
}

// checkJournalAside reports a generation file replay set aside: kept for
// inspection and never replayed again, so not damage, whatever it holds.
func (v *verifier) checkJournalAside(p string) {
	v.addKept(p, KindCommitJournal, "set aside by replay; kept, never replayed again")
}

// pendingFor returns the writes replay would make to the log at p (a log
// directory, or a single file), by file, and how many there are: those of
// the commit journal of the nearest broker directory above p whose
// journaled files (cluster.JournaledFile) p's segment files are.
func (v *verifier) pendingFor(p string, dir bool) (map[string][]wal.Write, int) {
	probe := p
	if dir {
		probe = filepath.Join(p, segment.SegmentFileName(0))
	}
	for a := filepath.Dir(probe); ; a = filepath.Dir(a) {
		if cluster.JournaledFile(a, probe) {
			if info, err := os.Stat(filepath.Join(a, wal.DirName)); err == nil && info.IsDir() {
				out := map[string][]wal.Write{}
				n := 0
				for f, ws := range v.journal(a).pending {
					if f == p || dir && filepath.Dir(f) == p {
						out[f] = ws
						n += len(ws)
					}
				}
				return out, n
			}
		}
		if filepath.Dir(a) == a {
			return nil, 0
		}
	}
}

// replayed builds, in a temporary directory, the log at p as the broker's
// replay will leave it: the files the journal writes to copied and the
// writes made to the copies, every other file of a log directory linked
// to. It returns the path to scan in its place. Nothing under p changes.
func (v *verifier) replayed(p string, dir bool, pending map[string][]wal.Write) (string, error) {
	tmp, err := os.MkdirTemp("", "pystream-verify-")
	if err != nil {
		return "", fmt.Errorf("verify: a directory to replay the journal in: %w", err)
	}
	v.temps = append(v.temps, tmp)
	if !dir {
		dst := filepath.Join(tmp, filepath.Base(p))
		return dst, copyReplayed(p, dst, pending[p])
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		src, dst := filepath.Join(p, e.Name()), filepath.Join(tmp, e.Name())
		if ws, ok := pending[src]; ok {
			if err := copyReplayed(src, dst, ws); err != nil {
				return "", err
			}
			continue
		}
		if err := os.Symlink(src, dst); err != nil {
			return "", fmt.Errorf("verify: %w", err)
		}
	}
	return tmp, nil
}

// copyReplayed copies the file src to dst and makes the writes to the
// copy, as replay makes them to src.
func copyReplayed(src, dst string, ws []wal.Write) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("verify: copy %s: %w", src, err)
	}
	for _, w := range ws {
		if _, err := out.WriteAt(w.Data, w.Pos); err != nil {
			return fmt.Errorf("verify: replay into a copy of %s: %w", src, err)
		}
	}
	return nil
}

// scanLog scans the log at p (a directory or a single file) as it will be
// once the broker replays its commit journal: when the journal holds
// writes to it, a copy with them made is scanned, and the result names
// p's files.
func (v *verifier) scanLog(p string, dir bool) logResult {
	scan := func(path string) logResult {
		if dir {
			return scanLogDir(path)
		}
		return scanLogFile(path)
	}
	pending, n := v.pendingFor(p, dir)
	if n == 0 {
		r := scan(p)
		r.path = p
		return r
	}
	note := fmt.Sprintf("the broker's commit journal holds %d writes to it not yet replayed; verified as the replay will leave it", n)
	tmp, err := v.replayed(p, dir, pending)
	if err != nil {
		return logResult{exists: true, dir: dir, path: p, journal: note, err: err}
	}
	r := scan(tmp)
	r.path, r.journal = tmp, note
	var cerr *log.CorruptionError
	if errors.As(r.err, &cerr) && cerr.Path != "" {
		if rel, err := filepath.Rel(tmp, cerr.Path); err == nil && !strings.HasPrefix(rel, "..") {
			if dir {
				cerr.Path = filepath.Join(p, rel)
			} else {
				cerr.Path = p
			}
		}
	}
	for i, note := range r.notes {
		r.notes[i] = strings.ReplaceAll(note, tmp, p)
	}
	if r.err != nil && !errors.As(r.err, &cerr) {
		r.err = errors.New(strings.ReplaceAll(r.err.Error(), tmp, p))
	}
	return r
}

// removeTemps removes the temporary directories logs were replayed into.
func (v *verifier) removeTemps() {
	for _, tmp := range v.temps {
		_ = os.RemoveAll(tmp) // best effort: a temporary copy, outside the data directory
	}
	v.temps = nil
}
