package kafka

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
)

// conn is one client connection to one broker's listener. Requests are
// answered in order, as Kafka requires of a connection; produce requests
// are begun as they arrive, while those before them are still written
// (serve, answerer), every other request once those before it are
// answered.
type conn struct {
	s      *Server
	broker int
	nc     net.Conn
	// ctx is done when the broker's listener closes.
	ctx context.Context
	// ahead is what watchGone read of the client's next request, given
	// to the next Read first.
	ahead []byte
	log   *slog.Logger

	// The SASL state (sasl.go), used with Config.Auth only. principal
	// is the authenticated principal, nil until an exchange proves one;
	// sasl is the exchange a handshake started; raw says a v0 handshake
	// did, so the next frames are bare SASL messages; closeAfter ends
	// the connection once the answer is written (a failed exchange).
	principal  *auth.Token
	sasl       *auth.SASL
	raw        bool
	closeAfter bool
}

// Read reads the client's requests: what watchGone read ahead, then the
// connection.
func (c *conn) Read(p []byte) (int, error) {
	if len(c.ahead) > 0 {
		n := copy(p, c.ahead)
		c.ahead = c.ahead[n:]
		return n, nil
	}
	return c.nc.Read(p)
}

// watchGone returns a context that ends when the client closes the
// connection while a request waits (a JoinGroup or SyncGroup may wait
// for a rebalance for minutes), so that the wait ends with the client
// rather than with the rebalance. It reads one byte ahead: a client that
// sends its next request meanwhile is alive, its byte kept for the next
// Read (ahead), and the watch ends there. stop ends the watch and waits
// for it.
func (c *conn) watchGone() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(c.ctx)
	_ = c.nc.SetReadDeadline(time.Time{})
	done := make(chan struct{})
	var b [1]byte
	var n int
	go func() {
		defer close(done)
		var err error
		n, err = c.nc.Read(b[:])
		var ne net.Error
		if n == 0 && err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			cancel() // closed or reset: the client is gone
		}
	}()
	return ctx, func() {
		_ = c.nc.SetReadDeadline(time.Now()) // ends the read
		<-done
		c.ahead = append(c.ahead, b[:n]...)
		cancel()
	}
}

// serve reads and answers requests until the client goes, a request is
// refused, or the broker's listener closes.
func (c *conn) serve() {
	log := c.s.cfg.Logger.With("broker", c.broker, "remote", c.nc.RemoteAddr().String())
	c.log = log
	if tc, ok := c.nc.(*tls.Conn); ok {
		// The handshake is bounded like a request's arrival: a client
		// that opens the port and sends nothing holds it FrameTimeout.
		_ = c.nc.SetDeadline(time.Now().Add(c.s.cfg.FrameTimeout))
		if err := tc.HandshakeContext(c.ctx); err != nil {
			if c.ctx.Err() == nil {
				c.s.refusals.Refuse(log, c.nc.RemoteAddr(), "tls", "kafka connection closed: TLS handshake failed", "err", err)
			}
			return
		}
		_ = c.nc.SetWriteDeadline(time.Time{})
	}
	br := bufio.NewReader(c)
	a := c.answer()
	defer a.close()
	var out []byte
	for c.ctx.Err() == nil && !a.failed() {
		_ = c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.IdleTimeout))
		limit := c.s.cfg.MaxRequestBytes
		if c.s.cfg.Auth != nil && c.principal == nil {
			limit = min(limit, maxUnauthenticatedBytes)
		}
		size, err := readSize(br, limit)
		if err != nil {
			if !a.failed() {
				c.refused(log, err)
			}
			return
		}
		deadline := time.Now().Add(c.s.cfg.FrameTimeout)
		_ = c.nc.SetReadDeadline(deadline)
		if !c.s.inflight.acquire(c.ctx, int64(size), deadline) {
			log.Warn("kafka connection closed: server-wide request bytes in flight at their limit", "size", size)
			return
		}
		frame, err := readBody(br, size)
		if err != nil {
			c.s.inflight.release(int64(size))
			if !a.failed() {
				c.refused(log, err)
			}
			return
		}
		if !c.raw && isProduce(frame) {
			// Begun now, in the order sent — once fewer than
			// maxPipelined are unanswered — and answered in that order
			// by the answering goroutine while the next requests are read.
			if !a.push(size, func() func([]byte) ([]byte, error) { return c.begin(frame) }) {
				c.s.inflight.release(int64(size))
				return
			}
			continue
		}
		// Any other request is handled once every request before it is
		// answered: it sees what they wrote, and may change the
		// connection (SASL).
		if !a.drain() {
			c.s.inflight.release(int64(size))
			return
		}
		out, err = c.begin(frame)(out[:0])
		c.s.inflight.release(int64(size))
		if err != nil {
			c.refused(log, err)
			return
		}
		if len(out) > 0 {
			_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
			if _, err := c.nc.Write(out); err != nil {
				return
			}
		}
		if c.closeAfter {
			return
		}
		if cap(out) > 1<<20 {
			out = nil // keep no large buffer on an idle connection
		}
	}
}

// pending is a produce request begun and not yet answered, and the bytes
// in flight it holds.
type pending struct {
	finish func([]byte) ([]byte, error)
	size   int
}

// answerer answers a connection's produce requests on a goroutine of its
// own, in the order they were begun, while serve reads the next ones: a
// Kafka client keeps up to five produce requests in flight, and each is
// begun — queued for its partitions, where it may share an append and an
// fsync with the others — as soon as it arrives, not once the requests
// before it are answered. At most maxPipelined are begun and unanswered.
type answerer struct {
	c *conn
	// queue carries the begun requests to the answering goroutine;
	// slots holds one token per request begun and not yet answered.
	queue chan pending
	slots chan struct{}
	done  chan struct{}
	// broken is set when an answer fails or cannot be written: the
	// connection is closed, and what is still queued is waited for and
	// not answered.
	broken chan struct{}
}

// answer starts the connection's answering goroutine.
func (c *conn) answer() *answerer {
	a := &answerer{c: c, queue: make(chan pending, maxPipelined), slots: make(chan struct{}, maxPipelined),
		done: make(chan struct{}), broken: make(chan struct{})}
	go a.run()
	return a
}

// push begins a produce request of size bytes in flight and queues it for
// its answer, once fewer than maxPipelined are unanswered. It reports
// false, begin not called and the bytes still the caller's, when the
// connection broke meanwhile: a request read behind a failed answer is
// neither answered nor begun.
func (a *answerer) push(size int, begin func() func([]byte) ([]byte, error)) bool {
	a.slots <- struct{}{}
	if a.failed() {
		<-a.slots
		return false
	}
	a.queue <- pending{begin(), size}
	return true
}

// drain waits until every queued request is answered, and reports
// whether the connection is still good.
func (a *answerer) drain() bool {
	for range maxPipelined {
		a.slots <- struct{}{}
	}
	for range maxPipelined {
		<-a.slots
	}
	return !a.failed()
}

// failed reports whether an answer failed: the connection is closing.
func (a *answerer) failed() bool {
	select {
	case <-a.broken:
		return true
	default:
		return false
	}
}

// close ends the answering goroutine once it has answered (or, the
// connection broken, waited for) every queued request: their records are
// queued for their partitions and must be waited for before their bytes
// in flight are released.
func (a *answerer) close() {
	close(a.queue)
	<-a.done
}

func (a *answerer) run() {
	defer close(a.done)
	c := a.c
	var out []byte
	for p := range a.queue {
		if a.failed() {
			_, _ = p.finish(nil)
		} else {
			var err error
			out, err = p.finish(out[:0])
			switch {
			case err != nil:
				c.refused(c.log, err)
				a.fail()
			case len(out) > 0:
				_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
				if _, err := c.nc.Write(out); err != nil {
					a.fail()
				}
			}
		}
		c.s.inflight.release(int64(p.size))
		<-a.slots
		if cap(out) > 1<<20 {
			out = nil
		}
	}
}

// fail marks the connection broken and closes it, which ends serve's read.
func (a *answerer) fail() {
	close(a.broken)
	_ = a.c.nc.Close()
}

// maxPipelined is how many produce requests of one connection are begun
// and not yet answered: what a Kafka client keeps in flight
// (max.in.flight.requests.per.connection, 5 for an idempotent producer).
const maxPipelined = 5

// isProduce reports whether a frame (without its size) is a produce
// request.
func isProduce(frame []byte) bool {
	return len(frame) >= 2 && int16(binary.BigEndian.Uint16(frame)) == int16(kmsg.Produce)
}

// refused logs why a connection ends, unless it simply closed.
func (c *conn) refused(log interface{ Warn(string, ...any) }, err error) {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), c.ctx.Err() != nil:
	case errors.Is(err, ErrSASL):
		// saslStep logged it, naming the principal.
	case errors.Is(err, ErrUnauthenticated):
		c.s.refusals.Refuse(c.log, c.nc.RemoteAddr(), "unauthenticated", "kafka connection closed: a request before SASL authentication (configure the client with SASL: docs/kafka.md)", "err", err)
	case errors.As(err, &ne) && ne.Timeout():
		c.s.refusals.Refuse(c.log, c.nc.RemoteAddr(), "timeout", "kafka connection closed: timed out waiting for a request", "err", err)
	default:
		c.s.metrics.refused()
		c.s.refusals.Refuse(c.log, c.nc.RemoteAddr(), "bad_request", "kafka connection closed: bad request", "err", err)
	}
}

// handle decodes one frame and appends its response frame to dst; an
// error closes the connection (nothing appended). An acks=0 produce
// appends nothing.
func (c *conn) handle(dst []byte, frame []byte) ([]byte, error) {
	return c.begin(frame)(dst)
}

// begin is handle in two steps: it decodes the frame and starts its
// request, and finish appends the response. A produce request is queued
// for its partitions' leaders before begin returns (produceBegin), so
// that the produce requests a connection begins one after the other reach
// each partition in order and may share an append; every other request is
// answered within begin.
func (c *conn) begin(frame []byte) (finish func(dst []byte) ([]byte, error)) {
	if c.raw {
		return func(dst []byte) ([]byte, error) { return c.handleRawSASL(dst, frame) }
	}
	failed := func(err error) func([]byte) ([]byte, error) {
		return func(dst []byte) ([]byte, error) { return dst, err }
	}
	r, err := parseHeader(frame)
	if err != nil {
		return failed(err)
	}
	a, known := c.s.apis[r.key]
	if !known || r.req == nil {
		return failed(&FrameError{Size: int64(len(frame)), Err: errorf(ErrUnknownAPI, "key %d", r.key)})
	}
	if c.s.cfg.Auth != nil && c.principal == nil && a.role != auth.RoleOpen {
		return failed(errorf(ErrUnauthenticated, "%s", a.key.Name()))
	}
	if r.key == int16(kmsg.ApiVersions) && r.version > a.max {
		// Brokers answer a newer ApiVersions with a v0 answer: error 35
		// and the key list, so the client can pick a version it has.
		start := time.Now()
		resp := c.s.apiVersionsResponse(0, kerr.UnsupportedVersion.Code)
		c.s.metrics.observe(r.key, time.Since(start), []int16{kerr.UnsupportedVersion.Code})
		x := &exchange{s: c.s, broker: c.broker, ctx: c.ctx, remote: c.nc.RemoteAddr(), clientID: r.clientID, c: c}
		x.logRefused(c.log, r.key, r.version, r.correlationID, []refusedItem{{kerr.UnsupportedVersion.Code, 1, versionsServed(&a, r.version)}})
		return func(dst []byte) ([]byte, error) { return appendResponse(dst, r.correlationID, resp), nil }
	}
	if r.version < 0 || r.version > r.req.MaxVersion() {
		return failed(&FrameError{Size: int64(len(frame)), Err: errorf(ErrUnsupportedVersion, "%s v%d", kmsg.NameForKey(r.key), r.version)})
	}
	if err := r.decodeBody(); err != nil {
		return failed(err)
	}
	start := time.Now()
	x := &exchange{s: c.s, broker: c.broker, ctx: c.ctx, remote: c.nc.RemoteAddr(), clientID: r.clientID, c: c}
	code, reason := c.s.gate(&a, r.version)
	var after func(kmsg.Response)
	if code == 0 && c.principal != nil {
		code, reason, after = screen(&a, c.principal, r.req)
		if code == 0 {
			// The items screen refuses, by the principal's prefixes.
			for _, denied := range []int16{kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code, kerr.TransactionalIDAuthorizationFailed.Code} {
				x.explain(denied, reason)
			}
		}
	}
	respond := func(resp kmsg.Response) func([]byte) ([]byte, error) {
		return func(dst []byte) ([]byte, error) {
			if after != nil && resp != nil {
				after(resp)
			}
			c.s.metrics.observe(r.key, time.Since(start), x.codes)
			if resp == nil {
				return dst, nil
			}
			resp.SetVersion(r.version)
			x.logRefused(c.log, r.key, r.version, r.correlationID, x.fillMessages(resp))
			return appendResponse(dst, r.correlationID, resp), nil
		}
	}
	switch {
	case code != 0:
		return respond(a.fail(r.req, x.refuse(code, reason)))
	case r.key == int16(kmsg.Produce):
		produced := c.s.produceBegin(x, r.req)
		return func(dst []byte) ([]byte, error) { return respond(produced())(dst) }
	case a.waits:
		var stop func()
		x.ctx, stop = c.watchGone()
		resp := a.handle(x, r.req)
		stop()
		return respond(resp)
	default:
		return respond(a.handle(x, r.req))
	}
}
