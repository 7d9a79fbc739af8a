package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// This file holds consumer groups over HTTP (docs/groups.md): the wire
// types and the client's calls.

// Error codes of consumer groups. A member answered CodeFencedMemberEpoch
// or CodeUnknownMemberID gives up its partitions and joins again (member
// epoch 0); both are 409 and also match ErrConflict.
const (
	// CodeFencedMemberEpoch: the member epoch sent is not the member's
	// current one (Kafka's FENCED_MEMBER_EPOCH), on a heartbeat or a
	// commit (409).
	CodeFencedMemberEpoch = "fenced_member_epoch"
	// CodeUnknownMemberID: the member id is not a member of the group: it
	// left, timed out or never joined (Kafka's UNKNOWN_MEMBER_ID) (409).
	CodeUnknownMemberID = "unknown_member_id"
	// CodeNotCoordinator: in cluster mode, a group request reached a node
	// that does not coordinate groups; ErrorBody.Coordinator names the
	// one that does (421). The Client follows it by itself.
	CodeNotCoordinator = "not_coordinator"
)

// GroupTopicPartitions is some partitions of one topic, ascending.
type GroupTopicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// GroupHeartbeatRequest is the body of POST /api/groups/{group}/heartbeat,
// Kafka's ConsumerGroupHeartbeat.
type GroupHeartbeatRequest struct {
	// MemberID is the id the join answered; empty to join as a new
	// member. Joining (epoch 0) with an id joins again under it, giving
	// up whatever that member held but what Owned claims.
	MemberID string `json:"member_id,omitempty"`
	// MemberEpoch is 0 to join, -1 to leave, else the epoch of the last
	// answer.
	MemberEpoch int32 `json:"member_epoch"`
	// Topics is the subscription: required to join, omitted afterwards
	// to keep it.
	Topics []string `json:"topics,omitempty"`
	// Owned is every partition the member holds now; a partition left
	// out is released. Omitted: none. On a join it claims what the member
	// held before it was forgotten (the server restarted, the coordinator
	// moved): it keeps each partition no other member holds.
	Owned []GroupTopicPartitions `json:"owned,omitempty"`
	// MaxWaitMS lets the server hold the answer, up to the heartbeat
	// interval, until the member's assignment changes (a long poll); 0
	// answers at once.
	MaxWaitMS uint32 `json:"max_wait_ms,omitempty"`
	// ClientID names the member's program in descriptions (default: its
	// User-Agent).
	ClientID string `json:"client_id,omitempty"`
}

// GroupHeartbeatResponse answers a heartbeat: the member's id and epoch,
// what it may hold now, and when to heartbeat next.
type GroupHeartbeatResponse struct {
	MemberID    string `json:"member_id"`
	MemberEpoch int32  `json:"member_epoch"`
	// HeartbeatIntervalMS is the interval at which to heartbeat.
	HeartbeatIntervalMS int64 `json:"heartbeat_interval_ms"`
	// SessionTimeoutMS is how long the server keeps the member without a
	// heartbeat. A member with no successful heartbeat for that long
	// (counted from when it sent the last one answered) must stop reading
	// its partitions: they may be another member's by then.
	SessionTimeoutMS int64 `json:"session_timeout_ms"`
	// Assignment is what the member may hold now. A partition it holds
	// that is not here must be released: commit it, stop reading it, and
	// leave it out of the next heartbeat's owned.
	Assignment []GroupTopicPartitions `json:"assignment"`
}

// GroupCommitRequest is the body of PUT
// /api/groups/{group}/offsets/{topic}/{p}: a member's commit.
type GroupCommitRequest struct {
	MemberID    string `json:"member_id"`
	MemberEpoch int32  `json:"member_epoch"`
	// Offset is the next offset the group reads from the partition.
	Offset uint64 `json:"offset"`
}

// GroupsResponse answers GET /api/groups.
type GroupsResponse struct {
	Groups []GroupSummary `json:"groups"`
}

// GroupSummary is one group in a listing.
type GroupSummary struct {
	Group string `json:"group"`
	// Protocol is "consumer" (HTTP) or "classic" (Kafka); omitted for a
	// group with committed offsets and no members.
	Protocol string `json:"protocol,omitempty"`
	// State is Empty, Stable, Reconciling (consumer), or
	// PreparingRebalance, CompletingRebalance, Stable (classic).
	State   string `json:"state"`
	Members int    `json:"members"`
}

// GroupDescription answers GET /api/groups/{group}.
type GroupDescription struct {
	Group    string `json:"group"`
	Protocol string `json:"protocol,omitempty"`
	State    string `json:"state"`
	// ProtocolType is "consumer" for consumers; Assignor the assignment
	// strategy (the coordinator's "uniform" for consumer groups).
	ProtocolType string `json:"protocol_type,omitempty"`
	Assignor     string `json:"assignor,omitempty"`
	// Epoch is the group epoch (consumer) or generation (classic); 0
	// without members.
	Epoch   int32         `json:"epoch"`
	Members []GroupMember `json:"members"`
	// Offsets is every partition the group committed or is assigned.
	Offsets []GroupPartitionOffset `json:"offsets"`
}

// GroupMember is one member of a described group.
type GroupMember struct {
	MemberID   string                 `json:"member_id"`
	InstanceID string                 `json:"instance_id,omitempty"`
	ClientID   string                 `json:"client_id,omitempty"`
	ClientHost string                 `json:"client_host,omitempty"`
	Assignment []GroupTopicPartitions `json:"assignment"`
}

// GroupPartitionOffset is one partition of a described group, the row of
// kafka-consumer-groups --describe.
type GroupPartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// CommittedOffset is null when the group never committed here.
	CommittedOffset *uint64 `json:"committed_offset"`
	// LogEndOffset is the partition's high watermark (what a consumer can
	// read); null when unknown (the topic is gone).
	LogEndOffset *uint64 `json:"log_end_offset"`
	// Lag is LogEndOffset - CommittedOffset; null when either is.
	Lag *uint64 `json:"lag"`
	// MemberID is the member assigned the partition; omitted when none.
	MemberID string `json:"member_id,omitempty"`
}

// DeleteGroupResponse answers DELETE /api/groups/{group}.
type DeleteGroupResponse struct {
	Group string `json:"group"`
	// OffsetsDeleted is how many committed offsets the group had.
	OffsetsDeleted int `json:"offsets_deleted"`
}

func groupPath(group string) string { return "/api/groups/" + url.PathEscape(group) }

// GroupHeartbeat calls POST /api/groups/{group}/heartbeat. A stale epoch
// is an *Error with CodeFencedMemberEpoch, an unknown member one with
// CodeUnknownMemberID (both match ErrConflict too).
func (c *Client) GroupHeartbeat(ctx context.Context, group string, req GroupHeartbeatRequest) (*GroupHeartbeatResponse, error) {
	var out GroupHeartbeatResponse
	return &out, c.do(ctx, http.MethodPost, groupPath(group)+"/heartbeat", nil, req, &out)
}

// CommitGroupOffset calls PUT /api/groups/{group}/offsets/{topic}/{p}: a
// member commits the group's offset of a partition it holds. A stale
// epoch or a partition it does not hold is an *Error matching
// ErrConflict.
func (c *Client) CommitGroupOffset(ctx context.Context, group, topic string, partition int, memberID string, memberEpoch int32, offset uint64) (*ConsumerOffsetResponse, error) {
	var out ConsumerOffsetResponse
	path := groupPath(group) + "/offsets/" + url.PathEscape(topic) + "/" + strconv.Itoa(partition)
	return &out, c.do(ctx, http.MethodPut, path, nil, GroupCommitRequest{MemberID: memberID, MemberEpoch: memberEpoch, Offset: offset}, &out)
}

// Groups calls GET /api/groups: every group of either protocol, and every
// consumer id with committed offsets (state Empty).
func (c *Client) Groups(ctx context.Context) (*GroupsResponse, error) {
	var out GroupsResponse
	return &out, c.do(ctx, http.MethodGet, "/api/groups", nil, nil, &out)
}

// Group calls GET /api/groups/{group}: members, assignments, committed
// offsets, log ends and lag. A group with no members and no offsets is
// an *Error matching ErrNotFound.
func (c *Client) Group(ctx context.Context, group string) (*GroupDescription, error) {
	var out GroupDescription
	return &out, c.do(ctx, http.MethodGet, groupPath(group), nil, nil, &out)
}

// DeleteGroup calls DELETE /api/groups/{group}: the group's committed
// offsets are deleted. A group with members is an *Error matching
// ErrConflict; one with nothing to delete matches ErrNotFound.
func (c *Client) DeleteGroup(ctx context.Context, group string) (*DeleteGroupResponse, error) {
	var out DeleteGroupResponse
	return &out, c.do(ctx, http.MethodDelete, groupPath(group), nil, nil, &out)
}
