package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// This file is a replica's leader-epoch history: where each leader's
// appends begin in its log. Two replicas that hold a record written in the
// same run hold the same record, so comparing two histories proves the
// part of two logs they share without reading it
// (docs/design.md § Leader-epoch history).

// EpochsFileName is a replica's leader-epoch history, beside its segments.
const EpochsFileName = "leader-epochs"

// epochsHeader is the first line of EpochsFileName, with its version.
const epochsHeader = "pystream leader epochs 1"

// MaxEpochsFileSize bounds the history a reader accepts: about 30,000
// runs. A larger EpochsFileName is set aside at open, as one
// ParseEpochsFile refuses is.
const MaxEpochsFileSize = 1 << 20

// epochsAsidePrefix starts the name of a history set aside at open.
const epochsAsidePrefix = EpochsFileName + ".damaged-"

// EpochsAsideName names a replica's history that could not be read,
// set aside at at: leader-epochs.damaged-<unix nanoseconds>.
func EpochsAsideName(at time.Time) string {
	return epochsAsidePrefix + strconv.FormatInt(at.UnixNano(), 10)
}

// IsEpochsAsideName reports whether name is one EpochsAsideName gives.
func IsEpochsAsideName(name string) bool {
	ns, ok := strings.CutPrefix(name, epochsAsidePrefix)
	if !ok || ns == "" || strings.Trim(ns, "0123456789") != "" {
		return false
	}
	_, err := strconv.ParseInt(ns, 10, 64)
	return err == nil
}

// EpochRun is where one run of a leader's appends begins in a replica's
// log: the records from Start up to the next run's Start were appended by
// the partition's leader at Epoch, between one opening of its log and the
// next (a log reopened after a crash or a failed write may have lost its
// unsynced tail, so what its leader appends next is another run). ID is
// random, drawn when the run starts, so that no two runs share one; a
// follower copies its leader's runs with the records. Within a run an
// offset is written once, so two replicas whose records at an offset
// belong to the same run hold the same record there.
//
// The zero ID marks an unknown run (its Epoch is zero too): records a replica took with
// no history (written before histories were kept, or sent by a leader
// that sends none). What lies in an unknown run is compared record by
// record.
type EpochRun struct {
	Epoch uint64
	ID    uint64
	Start uint64
}

// Known reports whether the run says who wrote its records.
func (r EpochRun) Known() bool { return r.ID != 0 }

// sameRun reports whether a and b are one run (Start aside).
func sameRun(a, b EpochRun) bool { return a.Epoch == b.Epoch && a.ID == b.ID }

// String renders the run as its text form: epoch:id:start, the id in 16
// hexadecimal digits.
func (r EpochRun) String() string { return fmt.Sprintf("%d:%016x:%d", r.Epoch, r.ID, r.Start) }

// describe names the run in a comparison's reason.
func (r EpochRun) describe() string {
	if !r.Known() {
		return "an unknown run"
	}
	return fmt.Sprintf("epoch %d (run %016x)", r.Epoch, r.ID)
}

// parseEpochRun reads String's form.
func parseEpochRun(s string) (EpochRun, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || len(parts[1]) != 16 {
		return EpochRun{}, fmt.Errorf("run %q: want epoch:id:start, the id in 16 hexadecimal digits", s)
	}
	epoch, err1 := strconv.ParseUint(parts[0], 10, 64)
	id, err2 := strconv.ParseUint(parts[1], 16, 64)
	start, err3 := strconv.ParseUint(parts[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return EpochRun{}, fmt.Errorf("run %q: %w", s, err)
	}
	return EpochRun{Epoch: epoch, ID: id, Start: start}, nil
}

// FormatEpochRuns renders runs in one line, each in its text form
// (EpochRun.String), separated by commas: how a request carries them.
func FormatEpochRuns(runs []EpochRun) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// ParseEpochRuns reads FormatEpochRuns' form and validates the runs
// (ValidateEpochRuns). The empty string is no runs. A run list it does
// not accept is an error wrapping ErrInvalidArgument.
func ParseEpochRuns(s string) ([]EpochRun, error) {
	if s == "" {
		return nil, nil
	}
	return parseRunList(strings.Split(s, ","))
}

// parseRunList reads one run from each field and validates the list.
func parseRunList(fields []string) ([]EpochRun, error) {
	runs := make([]EpochRun, 0, len(fields))
	for _, f := range fields {
		r, err := parseEpochRun(f)
		if err != nil {
			return nil, fmt.Errorf("cluster: leader epochs: %w: %w", ErrInvalidArgument, err)
		}
		runs = append(runs, r)
	}
	if err := ValidateEpochRuns(runs); err != nil {
		return nil, err
	}
	return runs, nil
}

// ValidateEpochRuns checks that runs can be a replica's history: starts
// strictly ascending, a known run's epoch no lower than an earlier known
// run's, no known run twice, no
// unknown run with an epoch, and never the same run twice in a row. What
// it refuses wraps ErrInvalidArgument.
func ValidateEpochRuns(runs []EpochRun) error {
	bad := func(i int, format string, args ...any) error {
		return fmt.Errorf("cluster: leader epochs: run %d (%s): %s: %w", i, runs[i], fmt.Sprintf(format, args...), ErrInvalidArgument)
	}
	var lastEpoch uint64
	seen := map[EpochRun]bool{}
	for i, r := range runs {
		switch {
		case i > 0 && r.Start <= runs[i-1].Start:
			return bad(i, "starts at %d, not after the run before it (%d)", r.Start, runs[i-1].Start)
		case i > 0 && sameRun(r, runs[i-1]):
			return bad(i, "continues the run before it")
		case !r.Known() && r.Epoch != 0:
			return bad(i, "an unknown run with an epoch")
		case !r.Known():
			continue
		case r.Epoch < lastEpoch:
			return bad(i, "epoch %d after epoch %d", r.Epoch, lastEpoch)
		case seen[EpochRun{Epoch: r.Epoch, ID: r.ID}]:
			return bad(i, "the run appears twice")
		}
		lastEpoch = r.Epoch
		seen[EpochRun{Epoch: r.Epoch, ID: r.ID}] = true
	}
	return nil
}

// EncodeEpochsFile renders runs as EpochsFileName: a header line with the
// version, then one run a line in its text form:
//
//	pystream leader epochs 1
//	3:9f2c1a0b3d4e5f60:0
//	7:0123456789abcdef:1200
func EncodeEpochsFile(runs []EpochRun) []byte {
	var b strings.Builder
	b.WriteString(epochsHeader + "\n")
	for _, r := range runs {
		b.WriteString(r.String() + "\n")
	}
	return []byte(b.String())
}

// ParseEpochsFile reads EncodeEpochsFile's form. Anything else — another
// header or version, a malformed run, a missing final newline, runs that
// ValidateEpochRuns refuses — is an error wrapping ErrInvalidArgument.
func ParseEpochsFile(data []byte) ([]EpochRun, error) {
	text, ok := strings.CutSuffix(string(data), "\n")
	if !ok {
		return nil, fmt.Errorf("cluster: leader epochs: no final newline: %w", ErrInvalidArgument)
	}
	lines := strings.Split(text, "\n")
	if lines[0] != epochsHeader {
		return nil, fmt.Errorf("cluster: leader epochs: header %.40q, want %q: %w", lines[0], epochsHeader, ErrInvalidArgument)
	}
	if len(lines) == 1 {
		return nil, nil
	}
	return parseRunList(lines[1:])
}

// runAt is the run of runs that holds offset off: the last that starts at
// or before it; the unknown run when none does.
func runAt(runs []EpochRun, off uint64) EpochRun {
	i, _ := slices.BinarySearchFunc(runs, off, func(r EpochRun, o uint64) int {
		if r.Start <= o {
			return -1
		}
		return 1
	})
	if i == 0 {
		return EpochRun{}
	}
	return runs[i-1]
}

// covering returns the runs that hold records in [from, to): the one
// holding from (the unknown run when none does, so that the list always
// starts at or before from) and every later one starting before to.
func covering(runs []EpochRun, from, to uint64) []EpochRun {
	out := []EpochRun{runAt(runs, from)}
	for _, r := range runs {
		if r.Start > from && r.Start < to {
			out = append(out, r)
		}
	}
	if !out[0].Known() && len(out) > 1 && out[0].Start == out[1].Start {
		out = out[1:]
	}
	return out
}

// runSpan is a range of offsets over which two replicas' runs do not
// change: a and b are the runs that hold it on each.
type runSpan struct {
	from, to uint64
	a, b     EpochRun
}

// runSpans cuts [from, to) where either history starts a run, and names
// each piece's run on both.
func runSpans(a, b []EpochRun, from, to uint64) []runSpan {
	cuts := []uint64{from, to}
	for _, r := range slices.Concat(a, b) {
		if r.Start > from && r.Start < to {
			cuts = append(cuts, r.Start)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []runSpan
	for i := 0; i+1 < len(cuts); i++ {
		out = append(out, runSpan{from: cuts[i], to: cuts[i+1], a: runAt(a, cuts[i]), b: runAt(b, cuts[i])})
	}
	return out
}

// epochHistory is one replica's runs, kept by its Broker with its log and
// written to EpochsFileName before any record of a new run is appended,
// so that after a crash no record is found in a run it was not written
// in. Runs that start at or past the log's end hold nothing and are
// dropped, at open and when the log is cut. It is safe for concurrent
// use; its writers (a leader's appends, a follower's) are serialised by
// the cluster.
type epochHistory struct {
	fsys durable.FS
	path string
	logf func(string, ...any)

	mu   sync.Mutex
	runs []EpochRun
	// leading is the run this replica's leader appends under since its
	// log was opened; zero until it first appends as leader.
	leading EpochRun
	// dirty is set while runs may differ from the file: runs past the
	// log's end were dropped in memory only, or a write failed. The next
	// append writes the file first, even when it starts no run.
	dirty bool
	// closed is set when the Broker let go of the replica's log (close):
	// a new opening may have read the file already, so this one never
	// writes it again.
	closed bool
}

// openEpochHistory reads dir's history and drops, in memory, the runs
// that start at or past end, the log's end, and every run when the log,
// from start to end, is empty (a log reset to start again there, then a
// crash before its history was cut): the file follows before the next
// append. A history that cannot be parsed is
// reported through logf and set aside, renamed, never deleted: the
// replica's records count as unknown runs, compared record by record,
// until its leader's next run.
func openEpochHistory(fsys durable.FS, dir string, start, end uint64, logf func(string, ...any)) (*epochHistory, error) {
	h := &epochHistory{fsys: fsys, path: filepath.Join(dir, EpochsFileName), logf: logf}
	data, err := durable.ReadSmallFile(fsys, h.path, MaxEpochsFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return h, nil
	case err != nil && !errors.Is(err, durable.ErrTooLarge) && !errors.Is(err, durable.ErrNotRegular):
		return nil, fmt.Errorf("cluster: read %s: %w", h.path, err)
	}
	runs, perr := ParseEpochsFile(data)
	if err != nil || perr != nil {
		aside := filepath.Join(dir, EpochsAsideName(time.Now()))
		switch rerr := fsys.Rename(h.path, aside); {
		case errors.Is(rerr, fs.ErrNotExist):
			return h, nil // a concurrent first open of the replica set it aside
		case rerr != nil:
			return nil, fmt.Errorf("cluster: set aside the unreadable %s: %w", h.path, rerr)
		}
		if serr := fsys.SyncDir(dir); serr != nil {
			return nil, fmt.Errorf("cluster: set aside the unreadable %s: %w", h.path, serr)
		}
		h.logf("cluster: %s could not be read (%v); it is kept as %s, and the replica's records are compared record by record until its next leader run",
			h.path, errors.Join(err, perr), aside)
		return h, nil
	}
	h.runs = runs
	if start >= end {
		end = 0 // an empty log holds no run
	}
	h.trimLocked(end) // written before the next records are appended
	h.pruneLocked(start)
	return h, nil
}

// pruneLocked drops, in memory, the runs that hold no record at or past
// start, the log start: every run but the last that starts at or before
// it. Retention deleted their records, and no comparison reads below a log
// start, so the file stays as long as the log's leader changes, not as
// long as every leader change the partition ever saw. It is written with
// the next append.
func (h *epochHistory) pruneLocked(start uint64) {
	i := 0
	for i+1 < len(h.runs) && h.runs[i+1].Start <= start {
		i++
	}
	if i > 0 {
		h.runs, h.dirty = slices.Clone(h.runs[i:]), true
	}
}

// close makes the history refuse every later write: its broker closed,
// dropped or reopened the replica's log, and a batch still in flight with
// this history must not write a run into the file a new opening of the
// replica has read.
func (h *epochHistory) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
}

// snapshot returns a copy of the runs.
func (h *epochHistory) snapshot() []EpochRun {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.runs)
}

// cover returns the runs that hold the records [from, to) (covering).
func (h *epochHistory) cover(from, to uint64) []EpochRun {
	h.mu.Lock()
	defer h.mu.Unlock()
	return covering(h.runs, from, to)
}

// lead makes sure the records a leader at epoch appends next, from end,
// belong to a run of this opening of the log: on the first append since
// the log was opened, or at a new epoch, it starts a new run at end and
// writes it down before returning.
func (h *epochHistory) lead(epoch, end uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leading.Known() && h.leading.Epoch == epoch {
		return nil
	}
	run := EpochRun{Epoch: epoch, ID: newRunID(), Start: end}
	if err := h.extendLocked([]EpochRun{run}, end); err != nil {
		return err
	}
	h.leading = run
	return nil
}

// newRunID draws a run's random id, never 0 (the unknown run's).
func newRunID() uint64 {
	for {
		if id := rand.Uint64(); id != 0 {
			return id
		}
	}
}

// follow records that the records a follower appends from end on belong
// to leaderRuns, the runs its leader sent with them (covering them from
// at or before end). With none, they belong to an unknown run. What it
// must write is written before it returns.
func (h *epochHistory) follow(end uint64, leaderRuns []EpochRun) error {
	if len(leaderRuns) == 0 {
		leaderRuns = []EpochRun{{Start: end}}
	}
	if err := ValidateEpochRuns(leaderRuns); err != nil {
		return err
	}
	if leaderRuns[0].Start > end {
		return fmt.Errorf("cluster: leader epochs: the first run (%s) starts after the first record (%d): %w", leaderRuns[0], end, ErrInvalidArgument)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.leading = EpochRun{}
	return h.extendLocked(leaderRuns, end)
}

// extendLocked makes the runs from end on those of add, each starting at
// the later of its start and end, dropping the runs that start at or past
// end, and writes the history when it changed. Of add's runs that start at
// or before end only the last, the one holding end, counts: a retry's runs
// cover records sent again from before end, and the earlier ones hold none
// of what is appended.
func (h *epochHistory) extendLocked(add []EpochRun, end uint64) error {
	for len(add) > 1 && add[1].Start <= end {
		add = add[1:]
	}
	if h.continuesLocked(add, end) {
		return nil // a follower's every batch: no copy of the history
	}
	next := slices.Clone(h.runs)
	next = slices.DeleteFunc(next, func(r EpochRun) bool { return r.Start >= end })
	for _, r := range add {
		r.Start = max(r.Start, end)
		if sameRun(runAt(next, r.Start), r) {
			continue
		}
		next = slices.DeleteFunc(next, func(o EpochRun) bool { return o.Start >= r.Start })
		next = append(next, r)
	}
	if slices.Equal(next, h.runs) && !h.dirty {
		return nil
	}
	return h.writeLocked(next)
}

// continuesLocked reports whether extendLocked(add, end) would change
// nothing: the history is written, no run starts at or past end, and
// each run of add is the one that already holds its first offset from end.
func (h *epochHistory) continuesLocked(add []EpochRun, end uint64) bool {
	if h.dirty || (len(h.runs) > 0 && h.runs[len(h.runs)-1].Start >= end) {
		return false
	}
	for _, r := range add {
		if !sameRun(runAt(h.runs, max(r.Start, end)), r) {
			return false
		}
	}
	return true
}

// truncate drops the runs that start at or past end, the log's new end
// after a cut, and writes the history when it changed. The caller cuts
// the log first: after a crash between the two, opening drops them.
func (h *epochHistory) truncate(end uint64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.trimLocked(end)
	if !h.dirty {
		return nil
	}
	return h.writeLocked(h.runs)
}

// trimLocked drops, in memory, the runs that start at or past end; the
// history is dirty until it is written again.
func (h *epochHistory) trimLocked(end uint64) {
	h.leading = EpochRun{} // what is appended next, at the cut, is another run
	if next := slices.DeleteFunc(slices.Clone(h.runs), func(r EpochRun) bool { return r.Start >= end }); len(next) != len(h.runs) {
		h.runs, h.dirty = next, true
	}
}

// writeLocked replaces the history with runs, on disk first. A history
// over MaxEpochsFileSize, which no reader would accept, loses its oldest
// runs first: the records they held count as an unknown run. A write that
// fails leaves the file in doubt (a rename whose directory sync failed has
// put the new runs in place), so the history is dirty until a write
// succeeds: the next append writes it first, even when it starts no run.
func (h *epochHistory) writeLocked(runs []EpochRun) error {
	if h.closed {
		return fmt.Errorf("cluster: write the leader-epoch history %s: its replica's log was closed: %w", h.path, log.ErrClosed)
	}
	if err := ValidateEpochRuns(runs); err != nil {
		return err
	}
	data := EncodeEpochsFile(runs)
	for len(data) > MaxEpochsFileSize && len(runs) > 1 {
		// Over the size a reader accepts: the oldest runs go, and the
		// records they held count as unknown, compared record by record.
		runs = runs[len(runs)/8+1:]
		data = EncodeEpochsFile(runs)
	}
	if err := durable.WriteFile(h.fsys, h.path, data); err != nil {
		h.dirty = true
		return fmt.Errorf("cluster: write the leader-epoch history: %w", err)
	}
	h.runs, h.dirty = runs, false
	return nil
}
