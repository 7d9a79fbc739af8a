package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
)

// Client calls other nodes' internal API over HTTP/2 without TLS, one
// persistent connection per node. It is safe for concurrent use.
type Client struct {
	http    *http.Client
	maxBody int64
}

// Dialer opens a connection to a node's internal address.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// DefaultPingTimeout is ClientConfig.PingTimeout's default.
const DefaultPingTimeout = 2 * time.Second

// ClientConfig configures a Client. The zero value is usable.
type ClientConfig struct {
	// Dial opens the connections; nil is a plain TCP dial.
	Dial Dialer
	// MaxPayload is the largest record payload of the brokers called
	// (0: log.DefaultMaxPayloadSize): an answer over BodyLimit of it is
	// an error.
	MaxPayload int
	// PingTimeout is how long an unanswered ping keeps a connection open:
	// one that brought nothing for half this is pinged, so a connection
	// whose bytes are held (a stalled peer, a network that stops
	// delivering without closing) is closed within one and a half times
	// this of its last frame, and the next call dials afresh. It should
	// be no shorter than the calls' own deadlines, which it would
	// otherwise cut short. Zero means DefaultPingTimeout.
	PingTimeout time.Duration
}

// NewClient returns a client that dials with dial (nil: a plain TCP
// dial), for brokers whose records carry payloads of at most maxPayload
// bytes (0: log.DefaultMaxPayloadSize): an answer over BodyLimit of it is
// an error. Every call is bounded by its context.
func NewClient(dial Dialer, maxPayload int) *Client {
	return NewClientWithConfig(ClientConfig{Dial: dial, MaxPayload: maxPayload})
}

// NewClientWithConfig returns a client configured by cfg. Every call is
// bounded by its context.
func NewClientWithConfig(cfg ClientConfig) *Client {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	t := &http.Transport{Protocols: &protocols, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}
	if cfg.Dial != nil {
		t.DialContext = cfg.Dial
	}
	ping := cfg.PingTimeout
	if ping <= 0 {
		ping = DefaultPingTimeout
	}
	t.HTTP2 = &http.HTTP2Config{PingTimeout: ping, SendPingTimeout: ping / 2}
	return &Client{http: &http.Client{Transport: t}, maxBody: BodyLimit(cfg.MaxPayload)}
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func endpoint(addr, path string, q url.Values) string {
	u := url.URL{Scheme: "http", Host: addr, Path: path, RawQuery: q.Encode()}
	return u.String()
}

// do sends one request and decodes a JSON answer into out (or returns the
// body when out is nil). A refusal comes back as the error the peer
// returned (DecodeError); a peer that cannot be reached as an error
// wrapping cluster.ErrBrokerUnavailable.
func (c *Client) do(ctx context.Context, method, addr, path string, q url.Values, in []byte, out any) ([]byte, http.Header, error) {
	var rd io.Reader
	if in != nil {
		rd = bytes.NewReader(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint(addr, path, q), rd)
	if err != nil {
		return nil, nil, fmt.Errorf("replication: %s %s: %w", method, path, err)
	}
	// The call is named in words, not by its URL path: the text may
	// reach a client.
	call := strings.TrimPrefix(path, "/v1/")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("replication: %s: node %s does not answer: %w: %w", call, addr, cluster.ErrBrokerUnavailable, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("replication: %s: node %s: its answer broke off: %w: %w", call, addr, cluster.ErrBrokerUnavailable, err)
	}
	if int64(len(b)) > c.maxBody {
		return nil, nil, fmt.Errorf("replication: %s: node %s: an answer over %d bytes: %w", call, addr, c.maxBody, ErrRemote)
	}
	if resp.StatusCode != http.StatusOK {
		var e Error
		if jerr := json.Unmarshal(b, &e); jerr != nil || e.Code == "" {
			return nil, nil, fmt.Errorf("replication: %s: node %s: status %d: %w", call, addr, resp.StatusCode, ErrRemote)
		}
		return nil, nil, DecodeError(&e)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return nil, nil, fmt.Errorf("replication: %s: node %s: its answer: %w", call, addr, err)
		}
	}
	return b, resp.Header, nil
}

func partitionQuery(topicName string, partition int) url.Values {
	return url.Values{"topic": {topicName}, "partition": {strconv.Itoa(partition)}}
}

func setFlag(q url.Values, name string, on bool) {
	if on {
		q.Set(name, "1")
	}
}

// Replicate sends records to the follower at addr.
func (c *Client) Replicate(ctx context.Context, addr string, req cluster.ReplicateRequest) (cluster.ReplicateResponse, error) {
	q := partitionQuery(req.Topic, req.Partition)
	q.Set("epoch", strconv.FormatUint(req.Epoch, 10))
	q.Set("leader", strconv.Itoa(req.Leader))
	q.Set("hw", strconv.FormatUint(req.HighWatermark, 10))
	q.Set("log_start", strconv.FormatUint(req.LogStart, 10))
	setFlag(q, "log_start_only", req.LogStartOnly)
	setFlag(q, "reset", req.Reset)
	setFlag(q, "reopen", req.Reopen)
	if len(req.Runs) > 0 {
		q.Set("runs", cluster.FormatEpochRuns(req.Runs))
	}
	var res cluster.ReplicateResponse
	_, _, err := c.do(ctx, http.MethodPost, addr, PathReplicate, q, encodeFrames(req.Records), &res)
	return res, err
}

// Records reads the replica at addr.
func (c *Client) Records(ctx context.Context, addr string, req cluster.RecordsRequest) (cluster.RecordsResponse, error) {
	q := partitionQuery(req.Topic, req.Partition)
	q.Set("from", strconv.FormatUint(req.From, 10))
	q.Set("max_bytes", strconv.Itoa(min(req.MaxBytes, math.MaxInt32)))
	if req.MaxRecords > 0 {
		q.Set("max_records", strconv.Itoa(min(req.MaxRecords, math.MaxInt32)))
	}
	setFlag(q, "committed", req.Committed)
	setFlag(q, "stable", req.Stable)
	setFlag(q, "runs", req.Runs)
	b, h, err := c.do(ctx, http.MethodGet, addr, PathRecords, q, nil, nil)
	if err != nil {
		return cluster.RecordsResponse{}, err
	}
	recs, err := decodeFrames(b)
	if err != nil {
		return cluster.RecordsResponse{}, err
	}
	res := cluster.RecordsResponse{Records: recs}
	if res.LogEnd, err = strconv.ParseUint(h.Get(HeaderLogEnd), 10, 64); err != nil {
		return cluster.RecordsResponse{}, fmt.Errorf("replication: records from %s: log end: %w", addr, err)
	}
	if res.HighWatermark, err = strconv.ParseUint(h.Get(HeaderHighWatermark), 10, 64); err != nil {
		return cluster.RecordsResponse{}, fmt.Errorf("replication: records from %s: high watermark: %w", addr, err)
	}
	if res.LogStart, err = strconv.ParseUint(h.Get(HeaderLogStart), 10, 64); err != nil {
		return cluster.RecordsResponse{}, fmt.Errorf("replication: records from %s: log start: %w", addr, err)
	}
	if req.Stable {
		if res.LastStable, err = strconv.ParseUint(h.Get(HeaderLastStable), 10, 64); err != nil {
			return cluster.RecordsResponse{}, fmt.Errorf("replication: records from %s: last stable offset: %w", addr, err)
		}
		if res.Aborted, err = ParseAborted(h.Get(HeaderAborted)); err != nil {
			return cluster.RecordsResponse{}, fmt.Errorf("replication: records from %s: %w", addr, err)
		}
	}
	if req.Runs {
		if res.Runs, err = cluster.ParseEpochRuns(h.Get(HeaderEpochRuns)); err != nil {
			return cluster.RecordsResponse{}, fmt.Errorf("replication: records from %s: %w", addr, err)
		}
	}
	return res, nil
}

// Digests asks the replica at addr for the digests of its records.
func (c *Client) Digests(ctx context.Context, addr string, req cluster.DigestsRequest) (cluster.DigestsResponse, error) {
	q := partitionQuery(req.Topic, req.Partition)
	q.Set("from", strconv.FormatUint(req.From, 10))
	q.Set("to", strconv.FormatUint(req.To, 10))
	q.Set("chunk", strconv.Itoa(req.Chunk))
	var res cluster.DigestsResponse
	_, _, err := c.do(ctx, http.MethodGet, addr, PathDigests, q, nil, &res)
	return res, err
}

// Cut asks the follower at addr to truncate its replica.
func (c *Client) Cut(ctx context.Context, addr string, req cluster.CutRequest) (cluster.CutResponse, error) {
	var res cluster.CutResponse
	return res, c.postJSON(ctx, addr, PathCut, req, &res)
}

// OffsetForTime asks the partition leader at addr for the first offset at
// or after a time (nanoseconds since the epoch, from 0).
func (c *Client) OffsetForTime(ctx context.Context, addr string, req cluster.OffsetForTimeRequest) (cluster.OffsetForTimeResponse, error) {
	q := partitionQuery(req.Topic, req.Partition)
	q.Set("ts", strconv.FormatInt(max(req.Timestamp, 0), 10))
	var res cluster.OffsetForTimeResponse
	_, _, err := c.do(ctx, http.MethodGet, addr, PathOffsetTime, q, nil, &res)
	return res, err
}

// Produce forwards a produce request to the partition leader at addr.
func (c *Client) Produce(ctx context.Context, addr string, req cluster.ProduceRequest) (cluster.ProduceResponse, error) {
	recs := make([]log.Record, len(req.Payloads))
	for i, p := range req.Payloads {
		recs[i].Payload = p
	}
	var res cluster.ProduceResponse
	_, _, err := c.do(ctx, http.MethodPost, addr, PathProduce, partitionQuery(req.Topic, req.Partition), encodeFrames(recs), &res)
	if err == nil && len(res.Records) != len(req.Payloads) {
		err = fmt.Errorf("replication: produce to %s: %d placements for %d records: %w", addr, len(res.Records), len(req.Payloads), ErrRemote)
	}
	return res, err
}

// Operate asks the node at addr to run an operation there.
func (c *Client) Operate(ctx context.Context, addr string, req cluster.OperateRequest) (cluster.OperateResponse, error) {
	var res cluster.OperateResponse
	return res, c.postJSON(ctx, addr, PathOperate, req, &res)
}

// Propose sends an encoded cluster.MetaCommand to the Raft leader at addr.
func (c *Client) Propose(ctx context.Context, addr string, cmd []byte) ([]byte, error) {
	b, _, err := c.do(ctx, http.MethodPost, addr, PathPropose, nil, cmd, nil)
	return b, err
}

// Heartbeat reports to the controller at addr and returns what it knows.
func (c *Client) Heartbeat(ctx context.Context, addr string, hb Heartbeat) (Observation, error) {
	var obs Observation
	return obs, c.postJSON(ctx, addr, PathHeartbeat, hb, &obs)
}

// postJSON sends in as a JSON body to path and decodes the answer into out.
func (c *Client) postJSON(ctx context.Context, addr, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("replication: %s: %w", path, err)
	}
	_, _, err = c.do(ctx, http.MethodPost, addr, path, nil, b, out)
	return err
}

// Membership sends a membership change to the metadata leader at addr.
func (c *Client) Membership(ctx context.Context, addr string, req MembershipRequest) error {
	return c.postJSON(ctx, addr, PathMembership, req, nil)
}
