package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/pystream/pystream/log"
)

// Client calls other nodes' internal API over HTTP/2 without TLS, one
// persistent connection per node. It is safe for concurrent use.
type Client struct {
	http *http.Client
}

// Dialer opens a connection to a node's internal address.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// NewClient returns a client that dials with dial (nil: a plain TCP
// dial). Every call is bounded by its context.
func NewClient(dial Dialer) *Client {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	t := &http.Transport{Protocols: &protocols, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}
	if dial != nil {
		t.DialContext = dial
	}
	t.HTTP2 = &http.HTTP2Config{PingTimeout: 2 * time.Second, SendPingTimeout: 2 * time.Second}
	return &Client{http: &http.Client{Transport: t}}
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func endpoint(addr, path string, q url.Values) string {
	u := url.URL{Scheme: "http", Host: addr, Path: path, RawQuery: q.Encode()}
	return u.String()
}

// do sends one request and decodes a JSON answer into out (or returns the
// body when out is nil). A refusal comes back as an *Error.
func (c *Client) do(ctx context.Context, method, addr, path string, q url.Values, in []byte, out any) ([]byte, http.Header, error) {
	var rd io.Reader
	if in != nil {
		rd = bytes.NewReader(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint(addr, path, q), rd)
	if err != nil {
		return nil, nil, fmt.Errorf("replication: %s %s: %w", method, path, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("replication: %s node %s: %w", path, addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("replication: %s node %s: read answer: %w", path, addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e Error
		if jerr := json.Unmarshal(b, &e); jerr != nil || e.Code == "" {
			return nil, nil, fmt.Errorf("replication: %s node %s: status %d: %w", path, addr, resp.StatusCode, ErrRemote)
		}
		return nil, nil, &e
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return nil, nil, fmt.Errorf("replication: %s node %s: answer: %w", path, addr, err)
		}
	}
	return b, resp.Header, nil
}

func partitionQuery(topicName string, partition int) url.Values {
	return url.Values{"topic": {topicName}, "partition": {strconv.Itoa(partition)}}
}

// Replicate sends records to the follower at addr.
func (c *Client) Replicate(ctx context.Context, addr string, req ReplicateRequest) (ReplicateResponse, error) {
	q := partitionQuery(req.Topic, req.Partition)
	q.Set("epoch", strconv.FormatUint(req.Epoch, 10))
	q.Set("leader", strconv.Itoa(req.Leader))
	q.Set("hw", strconv.FormatUint(req.HighWatermark, 10))
	q.Set("log_start", strconv.FormatUint(req.LogStart, 10))
	var res ReplicateResponse
	_, _, err := c.do(ctx, http.MethodPost, addr, PathReplicate, q, encodeFrames(req.Records), &res)
	return res, err
}

// Records reads the replica at addr.
func (c *Client) Records(ctx context.Context, addr string, req RecordsRequest) (RecordsResponse, error) {
	q := partitionQuery(req.Topic, req.Partition)
	q.Set("from", strconv.FormatUint(req.From, 10))
	q.Set("max_bytes", strconv.Itoa(req.MaxBytes))
	if req.Committed {
		q.Set("committed", "1")
	}
	b, h, err := c.do(ctx, http.MethodGet, addr, PathRecords, q, nil, nil)
	if err != nil {
		return RecordsResponse{}, err
	}
	recs, err := decodeFrames(b)
	if err != nil {
		return RecordsResponse{}, err
	}
	res := RecordsResponse{Records: recs}
	if res.LogEnd, err = strconv.ParseUint(h.Get(HeaderLogEnd), 10, 64); err != nil {
		return RecordsResponse{}, fmt.Errorf("replication: records from %s: log end: %w", addr, err)
	}
	if res.HighWatermark, err = strconv.ParseUint(h.Get(HeaderHighWatermark), 10, 64); err != nil {
		return RecordsResponse{}, fmt.Errorf("replication: records from %s: high watermark: %w", addr, err)
	}
	if res.LogStart, err = strconv.ParseUint(h.Get(HeaderLogStart), 10, 64); err != nil {
		return RecordsResponse{}, fmt.Errorf("replication: records from %s: log start: %w", addr, err)
	}
	return res, nil
}

// OffsetForTime asks the partition leader at addr for the first offset at
// or after a time (nanoseconds since the epoch, from 0).
func (c *Client) OffsetForTime(ctx context.Context, addr string, req OffsetForTimeRequest) (OffsetForTimeResponse, error) {
	if req.Timestamp < 0 {
		return OffsetForTimeResponse{}, fmt.Errorf("replication: offset for time %d: a time from 0: %w", req.Timestamp, ErrRemote)
	}
	q := partitionQuery(req.Topic, req.Partition)
	q.Set("ts", strconv.FormatInt(req.Timestamp, 10))
	var res OffsetForTimeResponse
	_, _, err := c.do(ctx, http.MethodGet, addr, PathOffsetTime, q, nil, &res)
	return res, err
}

// Produce forwards a produce request to the partition leader at addr.
func (c *Client) Produce(ctx context.Context, addr string, req ProduceRequest) (ProduceResponse, error) {
	recs := make([]log.Record, len(req.Payloads))
	for i, p := range req.Payloads {
		recs[i].Payload = p
	}
	var res ProduceResponse
	_, _, err := c.do(ctx, http.MethodPost, addr, PathProduce, partitionQuery(req.Topic, req.Partition), encodeFrames(recs), &res)
	if err == nil && len(res.Records) != len(req.Payloads) {
		err = fmt.Errorf("replication: produce to %s: %d placements for %d records: %w", addr, len(res.Records), len(req.Payloads), ErrRemote)
	}
	return res, err
}

// Propose sends an encoded cluster.MetaCommand to the Raft leader at addr.
func (c *Client) Propose(ctx context.Context, addr string, cmd []byte) ([]byte, error) {
	b, _, err := c.do(ctx, http.MethodPost, addr, PathPropose, nil, cmd, nil)
	return b, err
}

// Heartbeat reports to the Raft leader at addr.
func (c *Client) Heartbeat(ctx context.Context, addr string, hb Heartbeat) error {
	return c.postJSON(ctx, addr, PathHeartbeat, hb)
}

// postJSON sends in as a JSON body to path and expects {}.
func (c *Client) postJSON(ctx context.Context, addr, path string, in any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("replication: %s: %w", path, err)
	}
	_, _, err = c.do(ctx, http.MethodPost, addr, path, nil, b, nil)
	return err
}

// CatchUp asks the partition leader at addr to bring follower level.
func (c *Client) CatchUp(ctx context.Context, addr, topicName string, partition, follower int) (CatchUpResponse, error) {
	q := partitionQuery(topicName, partition)
	q.Set("follower", strconv.Itoa(follower))
	var res CatchUpResponse
	_, _, err := c.do(ctx, http.MethodPost, addr, PathCatchUp, q, nil, &res)
	return res, err
}

// Temporary reports whether err is worth a retry: the peer could not be
// reached, or asked for one (CodeEpochAhead, CodeUnavailable).
func Temporary(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Code == CodeEpochAhead || e.Code == CodeUnavailable
	}
	return err != nil
}

// Membership sends a membership change to the metadata leader at addr.
func (c *Client) Membership(ctx context.Context, addr string, req MembershipRequest) error {
	return c.postJSON(ctx, addr, PathMembership, req)
}
