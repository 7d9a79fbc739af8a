package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 1 << 20

// Client talks to one PyStream server. It is safe for concurrent use by many
// goroutines: it holds no state besides its configuration and an
// *http.Client, whose connections are kept alive and reused.
type Client struct {
	base      string
	http      *http.Client
	userAgent string
	// tls, when set by WithTLSConfig, replaces the transport's
	// TLSClientConfig once every option has run.
	tls *tls.Config
	// token is the bearer token sent with every request; "" sends none.
	token string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc (for
// timeouts, TLS or a test transport). The default is a client with a
// keep-alive transport tuned for many concurrent requests to one server and
// no overall timeout: pass a context with a deadline to bound a call.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.http = hc
		}
	}
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.userAgent = ua }
}

// WithToken sends token as "Authorization: Bearer <token>" with every
// request, for a server with an auth file (PYSTREAM_AUTH_FILE). An empty
// token sends none.
func WithToken(token string) Option {
	return func(c *Client) { c.token = token }
}

// New returns a client for the server at baseURL, for example
// "http://127.0.0.1:8000". A trailing slash is ignored. New never reads
// environment variables (not even proxy settings): the caller decides.
// A malformed baseURL is reported by the first call.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{
		base:      strings.TrimRight(baseURL, "/"),
		http:      &http.Client{Transport: NewTransport()},
		userAgent: "pystream-apiclient",
	}
	for _, o := range opts {
		o(c)
	}
	c.applyTLS()
	return c
}

// BaseURL returns the server address the client was built with, without a
// trailing slash.
func (c *Client) BaseURL() string { return c.base }

// NewTransport returns the default transport of New: keep-alive with enough
// idle connections per host for a benchmark's concurrent producers, and no
// proxy.
func NewTransport() *http.Transport {
	return &http.Transport{
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     false,
	}
}

// Health calls GET /api/health.
func (c *Client) Health(ctx context.Context) (*HealthResponse, error) {
	var out HealthResponse
	return &out, c.do(ctx, http.MethodGet, "/api/health", nil, nil, &out)
}

// Ready calls GET /api/ready. A cluster that is not ready is an *Error
// with status 503, whose Reasons say why.
func (c *Client) Ready(ctx context.Context) (*ReadyResponse, error) {
	var out ReadyResponse
	return &out, c.do(ctx, http.MethodGet, "/api/ready", nil, nil, &out)
}

// Cluster calls GET /api/cluster: every broker and topic.
func (c *Client) Cluster(ctx context.Context) (*ClusterResponse, error) {
	var out ClusterResponse
	return &out, c.do(ctx, http.MethodGet, "/api/cluster", nil, nil, &out)
}

// ClusterNodes calls GET /api/cluster/nodes: the nodes of a cluster-mode
// cluster and its controller (an embedded server answers Mode
// ModeEmbedded and no nodes).
func (c *Client) ClusterNodes(ctx context.Context) (*ClusterNodesResponse, error) {
	var out ClusterNodesResponse
	return &out, c.do(ctx, http.MethodGet, "/api/cluster/nodes", nil, nil, &out)
}

// AddNode calls POST /api/cluster/nodes: node id, started with
// PYSTREAM_JOIN=on at the internal address addr, becomes a voter of the
// metadata group. An embedded server answers an *Error matching
// ErrConflict.
func (c *Client) AddNode(ctx context.Context, id int, addr string) (*ClusterNodesResponse, error) {
	var out ClusterNodesResponse
	return &out, c.do(ctx, http.MethodPost, "/api/cluster/nodes", nil, AddNodeRequest{ID: id, Addr: addr}, &out)
}

// RemoveNode calls DELETE /api/cluster/nodes/{id}: node id leaves the
// metadata group. An embedded server answers an *Error matching
// ErrConflict.
func (c *Client) RemoveNode(ctx context.Context, id int) (*ClusterNodesResponse, error) {
	var out ClusterNodesResponse
	return &out, c.do(ctx, http.MethodDelete, "/api/cluster/nodes/"+strconv.Itoa(id), nil, nil, &out)
}

// StopBroker calls POST /api/brokers/{id}/stop. Stopping a stopped broker
// is not an error.
func (c *Client) StopBroker(ctx context.Context, id int) (*BrokerStatus, error) {
	var out BrokerStatus
	return &out, c.do(ctx, http.MethodPost, "/api/brokers/"+strconv.Itoa(id)+"/stop", nil, nil, &out)
}

// ReopenBroker calls POST /api/brokers/{id}/reopen: the broker's failed
// logs are opened again from disk once space has returned.
func (c *Client) ReopenBroker(ctx context.Context, id int) (*ReopenResponse, error) {
	var out ReopenResponse
	return &out, c.do(ctx, http.MethodPost, fmt.Sprintf("/api/brokers/%d/reopen", id), nil, nil, &out)
}

// StartBroker calls POST /api/brokers/{id}/start. Starting a running broker
// is not an error.
func (c *Client) StartBroker(ctx context.Context, id int) (*BrokerStatus, error) {
	var out BrokerStatus
	return &out, c.do(ctx, http.MethodPost, "/api/brokers/"+strconv.Itoa(id)+"/start", nil, nil, &out)
}

// Topics calls GET /api/topics.
func (c *Client) Topics(ctx context.Context) (*TopicsResponse, error) {
	var out TopicsResponse
	return &out, c.do(ctx, http.MethodGet, "/api/topics", nil, nil, &out)
}

// CreateTopic calls POST /api/topics. It succeeds when the topic is new and
// when it already exists with the same settings; created tells the two
// apart. Other settings give an *Error matching ErrConflict.
func (c *Client) CreateTopic(ctx context.Context, name string, partitions, replicationFactor int) (detail *TopicDetail, created bool, err error) {
	var out TopicDetail
	status, err := c.doStatus(ctx, http.MethodPost, "/api/topics", nil,
		CreateTopicRequest{Name: name, Partitions: partitions, ReplicationFactor: replicationFactor}, &out)
	return &out, status == http.StatusCreated, err
}

// CreateTopicWithConfig is CreateTopic with configuration overrides
// (keys such as "retention.ms", values decimal strings). A key the server
// does not know, or a value its key does not accept, is an *Error
// matching ErrInvalidArgument that names the key, and nothing is created.
func (c *Client) CreateTopicWithConfig(ctx context.Context, name string, partitions, replicationFactor int, config map[string]string) (detail *TopicDetail, created bool, err error) {
	var out TopicDetail
	status, err := c.doStatus(ctx, http.MethodPost, "/api/topics", nil,
		CreateTopicRequest{Name: name, Partitions: partitions, ReplicationFactor: replicationFactor, Config: config}, &out)
	return &out, status == http.StatusCreated, err
}

// TopicConfig calls GET /api/topics/{topic}/config: the topic's effective
// configuration and the keys set for it.
func (c *Client) TopicConfig(ctx context.Context, name string) (*TopicConfigResponse, error) {
	var out TopicConfigResponse
	return &out, c.do(ctx, http.MethodGet, topicPath(name)+"/config", nil, nil, &out)
}

// AlterTopicConfig calls PATCH /api/topics/{topic}/config: the keys of set
// take their values for the topic, the keys in remove go back to the
// server's default. The change is checked as a whole: one bad key or
// value is an *Error matching ErrInvalidArgument and nothing changes. It
// returns the new effective configuration.
func (c *Client) AlterTopicConfig(ctx context.Context, name string, set map[string]string, remove []string) (*TopicConfigResponse, error) {
	body := AlterTopicConfigRequest{}
	for k, v := range set {
		body[k] = &v
	}
	for _, k := range remove {
		if _, ok := body[k]; ok {
			return nil, fmt.Errorf("%w: config key %q both set and removed", ErrInvalidArgument, k)
		}
		body[k] = nil
	}
	var out TopicConfigResponse
	return &out, c.do(ctx, http.MethodPatch, topicPath(name)+"/config", nil, body, &out)
}

// AddPartitions calls PATCH /api/topics/{topic} with {"partitions": n}:
// the topic grows to n partitions, the new ones placed and created before
// the count changes. The same count again answers the topic as it is; a
// smaller one is an *Error matching ErrInvalidArgument.
func (c *Client) AddPartitions(ctx context.Context, name string, n int) (*TopicDetail, error) {
	var out TopicDetail
	return &out, c.do(ctx, http.MethodPatch, topicPath(name), nil, UpdateTopicRequest{Partitions: n}, &out)
}

// Topic calls GET /api/topics/{topic}: the topic and every partition's
// replication state.
func (c *Client) Topic(ctx context.Context, name string) (*TopicDetail, error) {
	var out TopicDetail
	return &out, c.do(ctx, http.MethodGet, topicPath(name), nil, nil, &out)
}

// DeleteTopic calls DELETE /api/topics/{topic}: the topic, all its records
// and every consumer's committed offsets on it are deleted. An unknown
// topic is an *Error matching ErrNotFound.
func (c *Client) DeleteTopic(ctx context.Context, name string) (*DeleteTopicResponse, error) {
	var out DeleteTopicResponse
	return &out, c.do(ctx, http.MethodDelete, topicPath(name), nil, nil, &out)
}

// Produce calls POST /api/topics/{topic}/records with a JSON batch. The
// results come back in the order of records. When the server fails part of
// the batch, the *Error's Records says which records were acknowledged.
func (c *Client) Produce(ctx context.Context, topic string, records []ProduceRecord) (*ProduceResponse, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("%w: produce needs at least one record", ErrInvalidArgument)
	}
	var out ProduceResponse
	return &out, c.do(ctx, http.MethodPost, topicPath(topic)+"/records", nil, ProduceRequest{Records: records}, &out)
}

// ProduceTo produces records to one partition, whatever their keys
// (POST .../records?partition=N): one batch, acknowledged together.
func (c *Client) ProduceTo(ctx context.Context, topic string, partition int, records []ProduceRecord) (*ProduceResponse, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("%w: produce needs at least one record", ErrInvalidArgument)
	}
	if partition < 0 {
		return nil, fmt.Errorf("%w: partition %d", ErrInvalidArgument, partition)
	}
	q := url.Values{"partition": {strconv.Itoa(partition)}}
	var out ProduceResponse
	return &out, c.do(ctx, http.MethodPost, topicPath(topic)+"/records", q, ProduceRequest{Records: records}, &out)
}

// ProduceRaw produces one record whose value is sent as the raw request
// body (application/octet-stream), avoiding base64. A nil key means no key.
func (c *Client) ProduceRaw(ctx context.Context, topic string, key, value []byte) (*ProduceResponse, error) {
	return c.produceRaw(ctx, topic, key, value, url.Values{})
}

// ProduceRawTo is ProduceRaw to one partition, whatever the key.
func (c *Client) ProduceRawTo(ctx context.Context, topic string, partition int, key, value []byte) (*ProduceResponse, error) {
	if partition < 0 {
		return nil, fmt.Errorf("%w: partition %d", ErrInvalidArgument, partition)
	}
	return c.produceRaw(ctx, topic, key, value, url.Values{"partition": {strconv.Itoa(partition)}})
}

func (c *Client) produceRaw(ctx context.Context, topic string, key, value []byte, q url.Values) (*ProduceResponse, error) {
	if key != nil {
		q.Set("key_b64", encodeB64(key))
	}
	var out ProduceResponse
	return &out, c.send(ctx, http.MethodPost, topicPath(topic)+"/records", q,
		"application/octet-stream", value, &out, nil)
}

// Fetch calls GET /api/topics/{topic}/partitions/{p}/records: up to max
// records from offset, never past the high watermark. A max of 0 leaves the
// server's default (100); the server caps max at 1000.
func (c *Client) Fetch(ctx context.Context, topic string, partition int, offset uint64, max int) (*FetchResponse, error) {
	return c.FetchBytes(ctx, topic, partition, offset, max, 0)
}

// FetchBytes is Fetch with max_bytes, the value bytes at which the answer
// stops (like Kafka's fetch.max.bytes; it always holds at least one
// record, and the server caps it at PYSTREAM_FETCH_MAX_BYTES). Zero means
// the server's default.
func (c *Client) FetchBytes(ctx context.Context, topic string, partition int, offset uint64, max, maxBytes int) (*FetchResponse, error) {
	q := url.Values{}
	q.Set("offset", strconv.FormatUint(offset, 10))
	if max != 0 {
		q.Set("max", strconv.Itoa(max))
	}
	if maxBytes != 0 {
		q.Set("max_bytes", strconv.Itoa(maxBytes))
	}
	var out FetchResponse
	err := c.do(ctx, http.MethodGet, partitionPath(topic, partition)+"/records", q, nil, &out)
	var oor *OffsetOutOfRangeError
	if errors.As(err, &oor) {
		oor.Topic, oor.Partition, oor.Offset = topic, partition, offset
	}
	return &out, err
}

// PartitionOffsets calls GET /api/topics/{topic}/partitions/{p}/offsets,
// Kafka's ListOffsets: at is OffsetsEarliest (the log start),
// OffsetsLatest (the high watermark) or a time in milliseconds since the
// epoch, decimal (the first offset whose record is at least that late;
// Found false and the high watermark when none is).
func (c *Client) PartitionOffsets(ctx context.Context, topic string, partition int, at string) (*PartitionOffsetsResponse, error) {
	var out PartitionOffsetsResponse
	q := url.Values{"timestamp": {at}}
	return &out, c.do(ctx, http.MethodGet, partitionPath(topic, partition)+"/offsets", q, nil, &out)
}

// PartitionOffsetsForTime is PartitionOffsets at t, sent in milliseconds.
func (c *Client) PartitionOffsetsForTime(ctx context.Context, topic string, partition int, t time.Time) (*PartitionOffsetsResponse, error) {
	return c.PartitionOffsets(ctx, topic, partition, strconv.FormatInt(t.UnixMilli(), 10))
}

// ConsumerOffsets calls GET /api/consumers/{id}/offsets: every committed
// offset of the consumer.
func (c *Client) ConsumerOffsets(ctx context.Context, id string) (*ConsumerOffsetsResponse, error) {
	var out ConsumerOffsetsResponse
	return &out, c.do(ctx, http.MethodGet, consumerPath(id), nil, nil, &out)
}

// ConsumerOffset calls GET /api/consumers/{id}/offsets/{topic}/{p}. The
// answer's Offset is nil when the consumer never committed there.
func (c *Client) ConsumerOffset(ctx context.Context, id, topic string, partition int) (*ConsumerOffsetResponse, error) {
	var out ConsumerOffsetResponse
	return &out, c.do(ctx, http.MethodGet, consumerOffsetPath(id, topic, partition), nil, nil, &out)
}

// CommitOffset calls PUT /api/consumers/{id}/offsets/{topic}/{p}. Moving the
// offset backwards gives an *Error matching ErrConflict with Committed and
// Requested set.
func (c *Client) CommitOffset(ctx context.Context, id, topic string, partition int, offset uint64) (*ConsumerOffsetResponse, error) {
	var out ConsumerOffsetResponse
	return &out, c.do(ctx, http.MethodPut, consumerOffsetPath(id, topic, partition), nil, OffsetRequest{Offset: offset}, &out)
}

// ResetOffset calls POST /api/consumers/{id}/offsets/{topic}/{p}/reset: the
// operator's explicit move of a committed offset, backwards allowed, to at
// most the partition's high watermark.
func (c *Client) ResetOffset(ctx context.Context, id, topic string, partition int, offset uint64) (*ConsumerOffsetResponse, error) {
	var out ConsumerOffsetResponse
	return &out, c.do(ctx, http.MethodPost, consumerOffsetPath(id, topic, partition)+"/reset", nil, OffsetRequest{Offset: offset}, &out)
}

// Failover calls POST /api/topics/{topic}/partitions/{p}/failover.
func (c *Client) Failover(ctx context.Context, topic string, partition int) (*FailoverResponse, error) {
	var out FailoverResponse
	return &out, c.do(ctx, http.MethodPost, partitionPath(topic, partition)+"/failover", nil, nil, &out)
}

// CatchUp calls POST .../partitions/{p}/replicas/{broker}/catch-up.
func (c *Client) CatchUp(ctx context.Context, topic string, partition, broker int) (*CatchUpResponse, error) {
	var out CatchUpResponse
	return &out, c.do(ctx, http.MethodPost, replicaPath(topic, partition, broker)+"/catch-up", nil, nil, &out)
}

// Recover calls POST .../partitions/{p}/replicas/{broker}/recover.
func (c *Client) Recover(ctx context.Context, topic string, partition, broker int) (*RecoverResponse, error) {
	var out RecoverResponse
	return &out, c.do(ctx, http.MethodPost, replicaPath(topic, partition, broker)+"/recover", nil, nil, &out)
}

// MoveLeader calls POST .../partitions/{p}/replicas/{broker}/move-leader:
// leadership passes to an active, caught-up follower while the leader is
// available.
func (c *Client) MoveLeader(ctx context.Context, topic string, partition, broker int) (*MoveLeaderResponse, error) {
	var out MoveLeaderResponse
	return &out, c.do(ctx, http.MethodPost, replicaPath(topic, partition, broker)+"/move-leader", nil, nil, &out)
}

// Journal calls GET /api/journal: up to max entries of the cluster journal
// from offset since on, oldest first. A max of 0 leaves the server's
// default (100); the server accepts 1 to 1000. Continue from the answer's
// Next.
func (c *Client) Journal(ctx context.Context, since uint64, max int) (*JournalResponse, error) {
	q := url.Values{}
	q.Set("since", strconv.FormatUint(since, 10))
	if max != 0 {
		q.Set("max", strconv.Itoa(max))
	}
	var out JournalResponse
	return &out, c.do(ctx, http.MethodGet, "/api/journal", q, nil, &out)
}

// Paths. Every name is escaped as one path segment, so a consumer id with a
// slash or a space cannot change the route.

func topicPath(topic string) string { return "/api/topics/" + url.PathEscape(topic) }

func partitionPath(topic string, p int) string {
	return topicPath(topic) + "/partitions/" + strconv.Itoa(p)
}

func replicaPath(topic string, p, broker int) string {
	return partitionPath(topic, p) + "/replicas/" + strconv.Itoa(broker)
}

func consumerPath(id string) string { return "/api/consumers/" + url.PathEscape(id) + "/offsets" }

func consumerOffsetPath(id, topic string, p int) string {
	return consumerPath(id) + "/" + url.PathEscape(topic) + "/" + strconv.Itoa(p)
}

// do sends in (JSON-encoded unless nil) and decodes a 2xx answer into out.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	_, err := c.doStatus(ctx, method, path, q, in, out)
	return err
}

func (c *Client) doStatus(ctx context.Context, method, path string, q url.Values, in, out any) (int, error) {
	var body []byte
	ctype := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("apiclient: encode %s %s: %w", method, path, err)
		}
		body, ctype = b, "application/json"
	}
	var status int
	err := c.send(ctx, method, path, q, ctype, body, out, &status)
	return status, err
}

// notReadyTries bounds how many times a request answered not_ready is
// sent again, notReadyWait how long the client waits between two tries.
const (
	notReadyTries = 20
	notReadyWait  = 250 * time.Millisecond
)

// send performs one request and decodes the answer. A not_ready answer (a
// node replaying its metadata after a start) is sent again a little later,
// a bounded number of times; a not_coordinator answer naming the
// coordinator is followed once: the request is sent again there.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, ctype string, body []byte, out any, status *int) error {
	err := c.sendTo(ctx, c.base, method, path, q, ctype, body, out, status)
	for try := 1; try < notReadyTries && notReady(err); try++ {
		t := time.NewTimer(notReadyWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		err = c.sendTo(ctx, c.base, method, path, q, ctype, body, out, status)
	}
	var e *Error
	if errors.As(err, &e) && e.Code == CodeNotCoordinator {
		if base, ok := c.coordinatorBase(e.Coordinator); ok {
			return c.sendTo(ctx, base, method, path, q, ctype, body, out, status)
		}
	}
	return err
}

// notReady reports whether err is a not_ready answer.
func notReady(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeNotReady
}

// coordinatorBase is the base URL of the coordinator at addr (a
// host:port), in the client's own scheme; false for anything else.
func (c *Client) coordinatorBase(addr string) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" || strings.ContainsAny(addr, "/@?#") {
		return "", false
	}
	scheme, _, ok := strings.Cut(c.base, "://")
	if !ok {
		return "", false
	}
	return scheme + "://" + addr, true
}

// sendTo performs one request to the server at base and decodes the
// answer. The response body is always read to the end and closed so the
// connection returns to the pool.
func (c *Client) sendTo(ctx context.Context, base, method, path string, q url.Values, ctype string, body []byte, out any, status *int) error {
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("apiclient: %s %s: %w", method, path, err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(IntentHeader, "1")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("apiclient: %s %s: %w", method, path, err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody)) // drain for reuse
		_ = resp.Body.Close()
	}()
	if status != nil {
		*status = resp.StatusCode
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%w: %s %s: HTTP %d: decode body: %v", ErrUnexpectedResponse, method, path, resp.StatusCode, err)
	}
	return nil
}

// decodeError turns a non-2xx answer into an *Error. A body that is not the
// contract's envelope still gives an *Error with the status and the start
// of the body as its message. An offset_out_of_range answer is an
// *OffsetOutOfRangeError around its *Error.
func decodeError(resp *http.Response) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get(RequestIDHeader), RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	if err != nil {
		e.Message = fmt.Sprintf("%s (reading the error body: %v)", http.StatusText(resp.StatusCode), err)
		return e
	}
	var env struct {
		Error *ErrorBody `json:"error"`
		// Records is accepted beside "error" too, in case a server puts the
		// per-record results of a failed produce at the top level.
		Records []ProduceResult `json:"records"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Error == nil || env.Error.Code == "" {
		msg := strings.TrimSpace(string(raw))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		e.Message = msg
		return e
	}
	b := env.Error
	e.Code, e.Message = b.Code, b.Message
	if b.RequestID != "" {
		e.RequestID = b.RequestID
	}
	e.BrokerIDs, e.Committed, e.Requested, e.HighWatermark = b.BrokerIDs, b.Committed, b.Requested, b.HighWatermark
	e.LogStart = b.LogStart
	e.Coordinator = b.Coordinator
	e.Records = b.Records
	if e.Records == nil {
		e.Records = env.Records
	}
	if e.Code == CodeOffsetOutOfRange {
		oor := &OffsetOutOfRangeError{Err: e}
		if e.LogStart != nil {
			oor.LogStart = *e.LogStart
		}
		if e.HighWatermark != nil {
			oor.HighWatermark = *e.HighWatermark
		}
		return oor
	}
	return e
}

// maxRetryAfter bounds the Retry-After the client honours, so that a
// wrong header cannot park a caller for hours.
const maxRetryAfter = time.Minute

// retryAfter reads a Retry-After in whole seconds (the form PyStream
// sends), at most maxRetryAfter; 0 for none or another form.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, maxRetryAfter)
}
