package apiclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The events stream, GET /api/events:
// docs/explorer.md § The events stream
// Server-sent events, one "update" message at most every 100 ms
// per client, each carrying the cluster's state when it changed and the
// journal entries written since the last message. A message that
// carries journal entries has an id, the offset of its last entry; a
// client that reconnects sends it back as Last-Event-ID and the stream
// resumes after it.

// EventUpdate is the event name of every message of the stream.
const EventUpdate = "update"

// Update is the data of one message of GET /api/events.
type Update struct {
	// Time is the server's time when the message was sent, RFC 3339 with
	// nanoseconds, UTC: a client measures rates (records per second) by it.
	Time string `json:"time"`
	// Cluster is the cluster's state; omitted when it has not changed
	// since the client's last message.
	Cluster *ClusterState `json:"cluster,omitempty"`
	// Journal lists the journal entries written since the last message,
	// oldest first; omitted when there are none.
	Journal []JournalEntry `json:"journal,omitempty"`
}

// ClusterState is what the explorer draws: every broker, every
// partition's replicas, the controller's mode, every committed consumer
// offset and every consumer group with members.
type ClusterState struct {
	// Mode is ModeEmbedded or ModeCluster.
	Mode string `json:"mode"`
	// Controller is whether the cluster heals itself.
	Controller ControllerStatus `json:"controller"`
	Brokers    []BrokerStatus   `json:"brokers"`
	Topics     []TopicState     `json:"topics"`
	// Consumers are the committed offsets of every consumer, by consumer,
	// topic and partition. A group's offsets are among them too, under
	// the group id (a group commits as the consumer of its id).
	Consumers []ConsumerPosition `json:"consumers"`
	// Groups are the consumer groups with members, of either protocol
	// (HTTP's consumer groups and Kafka's classic ones), ascending by id,
	// each as GET /api/groups/{group} describes it: protocol, state,
	// epoch, members and their partitions, and per partition the
	// committed offset, the high watermark and the lag. In cluster mode
	// only the node that coordinates groups (the controller) lists them.
	Groups []GroupDescription `json:"groups"`
}

// TopicState is a topic and the replication status of its partitions.
type TopicState struct {
	Name              string           `json:"name"`
	PartitionCount    int              `json:"partition_count"`
	ReplicationFactor int              `json:"replication_factor"`
	Partitions        []PartitionState `json:"partitions"`
}

// PartitionState is a partition's status with its log start: every
// replica's log is drawn from LogStart to its log end.
type PartitionState struct {
	PartitionStatus
	// LogStart is the partition's first readable offset (its leader's log
	// start): 0 until retention deletes records.
	LogStart uint64 `json:"log_start"`
}

// ConsumerPosition is one committed offset of a consumer.
type ConsumerPosition struct {
	ConsumerID string `json:"consumer_id"`
	Topic      string `json:"topic"`
	Partition  int    `json:"partition"`
	Offset     uint64 `json:"offset"`
}

// ControllerStatus answers GET and PUT /api/controller: whether the
// controller heals the cluster on its own (fails over, shrinks the active
// set, recovers, moves leadership back) and after how long.
type ControllerStatus struct {
	// Automatic is false in manual mode (PYSTREAM_FAILOVER_AFTER=0, or
	// switched off at run time): the controller then changes no metadata.
	Automatic bool `json:"automatic"`
	// FailoverAfterMS is the delay in force, in milliseconds; 0 when
	// Automatic is false.
	FailoverAfterMS int64 `json:"failover_after_ms"`
	// Switchable is true where PUT /api/controller switches it: the
	// embedded cluster, and cluster mode, where the switch is the
	// cluster's metadata and every node reports it as applied there.
	Switchable bool `json:"switchable"`
}

// ControllerRequest is the body of PUT /api/controller.
type ControllerRequest struct {
	// Automatic turns automatic healing on or off; required.
	Automatic *bool `json:"automatic"`
	// Reason is journaled with the change.
	Reason string `json:"reason,omitempty"`
}

// Controller calls GET /api/controller.
func (c *Client) Controller(ctx context.Context) (*ControllerStatus, error) {
	var out ControllerStatus
	return &out, c.do(ctx, http.MethodGet, "/api/controller", nil, nil, &out)
}

// SetAutomatic calls PUT /api/controller: automatic healing on or off,
// journaled with reason.
func (c *Client) SetAutomatic(ctx context.Context, on bool, reason string) (*ControllerStatus, error) {
	var out ControllerStatus
	return &out, c.do(ctx, http.MethodPut, "/api/controller", nil, ControllerRequest{Automatic: &on, Reason: reason}, &out)
}

// EventsOptions says where GET /api/events starts its journal.
type EventsOptions struct {
	// LastEventID, when set, resumes a stream: entries after that journal
	// offset (sent as the Last-Event-ID header).
	LastEventID *uint64
	// Since, when LastEventID is not set, is the first journal offset to
	// send; nil sends only entries written from now on.
	Since *uint64
}

// ErrStreamEnded is returned by Events when the server ends the stream
// (it is shutting down, or dropped a client that did not keep up).
var ErrStreamEnded = errors.New("apiclient: the events stream ended")

// maxEventBytes bounds one message of the events stream.
const maxEventBytes = 16 << 20

// Events reads GET /api/events and calls fn with every message, in order,
// until ctx is done (nil), fn returns an error (that error), or the
// stream ends (ErrStreamEnded) or fails. lastID is the id of the last
// message that had one, so that a caller reconnecting after an error
// resumes there (EventsOptions.LastEventID).
func (c *Client) Events(ctx context.Context, opts EventsOptions, fn func(Update) error) (lastID *uint64, err error) {
	lastID = opts.LastEventID
	q := url.Values{}
	if opts.LastEventID == nil && opts.Since != nil {
		q.Set("since", strconv.FormatUint(*opts.Since, 10))
	}
	u := c.base + "/api/events"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return lastID, fmt.Errorf("apiclient: GET /api/events: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if opts.LastEventID != nil {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(*opts.LastEventID, 10))
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return lastID, nil
		}
		return lastID, fmt.Errorf("apiclient: GET /api/events: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return lastID, decodeError(resp)
	}
	err = readEvents(resp.Body, func(id, event string, data []byte) error {
		if id != "" {
			n, perr := strconv.ParseUint(id, 10, 64)
			if perr != nil {
				return fmt.Errorf("%w: GET /api/events: id %q is not a journal offset", ErrUnexpectedResponse, id)
			}
			lastID = &n
		}
		if event != EventUpdate {
			return nil // an event this client does not know: skipped, as EventSource does
		}
		var up Update
		if err := json.Unmarshal(data, &up); err != nil {
			return fmt.Errorf("%w: GET /api/events: decode message: %v", ErrUnexpectedResponse, err)
		}
		return fn(up)
	})
	if ctx.Err() != nil {
		return lastID, nil
	}
	if err == nil {
		err = ErrStreamEnded
	}
	return lastID, err
}

// readEvents parses a text/event-stream body (the WHATWG HTML standard's
// "event stream interpretation", the fields PyStream sends: id, event,
// data; comments and retry are skipped) and calls fn per message. It
// returns nil at the end of the body.
func readEvents(r io.Reader, fn func(id, event string, data []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxEventBytes)
	var (
		id, event string
		data      []byte
		hasData   bool
	)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if hasData {
				if event == "" {
					event = "message"
				}
				if err := fn(id, event, data); err != nil {
					return err
				}
			}
			id, event, data, hasData = "", "", data[:0], false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			id = value
		case "event":
			event = value
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data, hasData = append(data, value...), true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("apiclient: GET /api/events: %w", err)
	}
	return nil
}
