package bounds

import (
	"container/list"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The log lines of refused connections, bounded whatever a stranger sends
// (docs/security.md § Refused connections). Every port logs why it
// refused a connection — a failed TLS handshake, a peer that is no
// member, a failed SASL exchange — and a stranger that opens connections
// in a loop would otherwise write one line each. Refusals logs the first
// refusal of a remote IP for a reason at once, counts the ones that
// follow within RefusalLogInterval, and writes one summary line with
// that count when the interval is over: at most one line per interval
// for each remote IP and reason, and at most MaxRefusalSources of those
// remembered. Every refusal, logged or not, is counted in
// pystream_refused_connections_total{port,reason}.
const (
	// RefusalLogInterval is the least time between two lines about the
	// refusals of one remote IP for one reason.
	RefusalLogInterval = time.Minute
	// MaxRefusalSources caps the remote IPs and reasons remembered at
	// once; past it the one refused least recently is forgotten (its
	// refusals not yet logged stay in the counter only).
	MaxRefusalSources = 1024
)

// refusedName is the metric of refused connections.
const refusedName = "pystream_refused_connections_total"

// refusalKey is what one line stands for: a remote IP and a reason.
type refusalKey struct {
	ip, reason string
}

// refusalSource is the state of one refusalKey.
type refusalSource struct {
	key refusalKey
	// last is when the last line about it was written.
	last time.Time
	// suppressed counts the refusals since last, not logged.
	suppressed int
	// log and msg are the latest refusal's, for the summary line.
	log *slog.Logger
	msg string
	// flush, while set, writes the summary line when the interval ends.
	flush *time.Timer
	// elem is its place in Refusals.recent.
	elem *list.Element
}

// Refusals rate-limits the log lines of one port's refused connections
// and counts them. The zero value is not usable; NewRefusals makes one.
// Safe for concurrent use.
type Refusals struct {
	port    string
	counter *prometheus.CounterVec

	// mu guards the fields below.
	mu sync.Mutex
	// sources holds the remembered sources, recent orders them, most
	// recently refused first.
	sources map[refusalKey]*refusalSource
	recent  *list.List
}

// NewRefusals returns the refusal log of the port named port ("internal",
// "kafka", "http"), counting on reg (nil: a counter no one scrapes).
// Every port of a registry shares the one family.
func NewRefusals(reg prometheus.Registerer, port string) (*Refusals, error) {
	vec, err := counterVec(reg, prometheus.CounterOpts{
		Name: refusedName,
		Help: "Connections refused (a failed TLS handshake, a peer that is no member, a failed SASL authentication, ...), by port and reason; the log shows the first of each remote IP and reason and then one summary line a minute.",
	}, "port", "reason")
	if err != nil {
		return nil, err
	}
	return &Refusals{port: port, counter: vec, sources: map[refusalKey]*refusalSource{}, recent: list.New()}, nil
}

// Refuse counts one refused connection from remote for reason (a short
// word, a label of the counter) and logs it on log at WARN with msg and
// args, unless a line about remote's IP and reason was written less than
// RefusalLogInterval ago: then it is counted for the summary line that
// interval ends with. A nil Refusals logs every refusal; a nil log
// discards the lines.
func (r *Refusals) Refuse(log *slog.Logger, remote net.Addr, reason, msg string, args ...any) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if r == nil {
		log.Warn(msg, append(args, "reason", reason)...)
		return
	}
	r.counter.WithLabelValues(r.port, reason).Inc()
	if r.admit(log, hostOf(remote), reason, msg) {
		log.Warn(msg, append(args, "reason", reason)...)
	}
}

// admit reports whether a refusal from ip for reason is to be logged now,
// and else counts it for the summary line.
func (r *Refusals) admit(log *slog.Logger, ip, reason, msg string) bool {
	now := time.Now()
	key := refusalKey{ip: ip, reason: reason}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sources[key]
	if !ok {
		r.rememberLocked(&refusalSource{key: key, last: now})
		return true
	}
	r.recent.MoveToFront(s.elem)
	if s.suppressed == 0 && s.flush == nil && now.Sub(s.last) >= RefusalLogInterval {
		s.last = now
		return true
	}
	s.suppressed++
	s.log, s.msg = log, msg
	if s.flush == nil {
		s.flush = time.AfterFunc(s.last.Add(RefusalLogInterval).Sub(now), func() { r.summarize(s) })
	}
	return false
}

// rememberLocked adds s, forgetting the least recent source past
// MaxRefusalSources. r.mu must be held.
func (r *Refusals) rememberLocked(s *refusalSource) {
	for len(r.sources) >= MaxRefusalSources {
		oldest := r.recent.Back().Value.(*refusalSource)
		if oldest.flush != nil {
			oldest.flush.Stop()
		}
		r.recent.Remove(oldest.elem)
		delete(r.sources, oldest.key)
	}
	s.elem = r.recent.PushFront(s)
	r.sources[s.key] = s
}

// summarize writes the summary line of s's interval, if s is still
// remembered.
func (r *Refusals) summarize(s *refusalSource) {
	r.mu.Lock()
	if r.sources[s.key] != s {
		r.mu.Unlock()
		return
	}
	n, log, msg := s.suppressed, s.log, s.msg
	s.suppressed, s.flush, s.last = 0, nil, time.Now()
	r.mu.Unlock()
	log.Warn(msg+" (summary)", "port", r.port, "remote_ip", s.key.ip, "reason", s.key.reason,
		"refused", n, "within", RefusalLogInterval.String())
}

// hostOf is the IP of a remote address, its whole text when it has no
// port.
func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}
