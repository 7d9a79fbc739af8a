package kafka

import (
	"context"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
)

// api is one row of the handler table: an API key, the versions served,
// and two functions of the key's file (produce.go, fetch.go, ...).
type api struct {
	key      kmsg.Key
	min, max int16
	// handle answers a decoded request of a served version. A nil
	// response sends nothing (a produce with acks=0).
	handle func(x *exchange, req kmsg.Request) kmsg.Response
	// fail is req's answer with every item failing with code: the answer
	// to a version outside min..max that the codec still decodes.
	fail func(req kmsg.Request, code int16) kmsg.Response
	// coordinated marks a request only the coordinator serves — the
	// classic group protocol's and a transaction's: a listener that does
	// not coordinate groups and transactions (coordinatorCode) answers it
	// with fail, never reaching handle.
	coordinated bool
	// waits marks a request that may wait long for its answer (a
	// rebalance) or take long to do (many topics to create): it is
	// handled with a context that ends when the client closes the
	// connection (conn.watchGone).
	waits bool
	// notReady is the retriable code a request is answered with, through
	// fail, while the metadata is not known to be current
	// (backend.Data.MetadataCurrent): LEADER_NOT_AVAILABLE for what a
	// partition's leader serves, COORDINATOR_LOAD_IN_PROGRESS for what a
	// group coordinator does, as a Kafka broker answers while it loads.
	// Zero: the request does not depend on the metadata (ApiVersions).
	notReady int16
	// role is what a principal needs for the API when the listener has
	// an auth file (Config.Auth); scope how its items are checked past
	// the role, and deny the code a principal whose role is too small is
	// answered with, through fail (authz.go).
	role  auth.Role
	scope scope
	deny  int16
}

// table is every API the listener serves; ApiVersions advertises exactly
// these keys and versions. A new API is a new file with its handle and
// fail functions and one row here.
func (s *Server) table() []api {
	topicDenied, groupDenied := kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code
	txnDenied := kerr.TransactionalIDAuthorizationFailed.Code
	read, write, admin := auth.RoleRead, auth.RoleWrite, auth.RoleAdmin
	t := []api{
		{key: kmsg.Produce, min: 3, max: 9, handle: s.produce, fail: failProduce, notReady: kerr.LeaderNotAvailable.Code, role: write, scope: scopeTopics, deny: topicDenied},
		{key: kmsg.Fetch, min: 4, max: 12, handle: s.fetch, fail: failFetch, notReady: kerr.LeaderNotAvailable.Code, role: read, scope: scopeTopics, deny: topicDenied},
		{key: kmsg.ListOffsets, min: 1, max: 7, handle: s.listOffsets, fail: failListOffsets, notReady: kerr.LeaderNotAvailable.Code, role: read, scope: scopeTopics, deny: topicDenied},
		// The end of a leader epoch (offsetforleaderepoch.go): a consumer's
		// check for lost records after a leader change.
		{key: kmsg.OffsetForLeaderEpoch, min: 0, max: 4, handle: s.offsetForLeaderEpoch, fail: failOffsetForLeaderEpoch, notReady: kerr.LeaderNotAvailable.Code, role: read, scope: scopeTopics, deny: topicDenied},
		{key: kmsg.Metadata, min: 0, max: 12, handle: s.metadata, fail: failMetadata, notReady: kerr.LeaderNotAvailable.Code, role: read, scope: scopeTopics, deny: topicDenied},
		{key: kmsg.ApiVersions, min: 0, max: 3, handle: s.apiVersions, fail: failApiVersions, role: auth.RoleOpen},
		// Idempotent producers (initproducerid.go): advertising it turns
		// idempotence on in clients that default to it (kgo, the Java
		// producer since 3.0).
		{key: kmsg.InitProducerID, min: 0, max: 4, handle: s.initProducerID, fail: failInitProducerID, notReady: kerr.CoordinatorLoadInProgress.Code, role: write, deny: kerr.ClusterAuthorizationFailed.Code},
		// Transactions (txn.go): served where groups are coordinated.
		// AddPartitionsToTxn v4+ is the brokers' batched form, and
		// WriteTxnMarkers a broker's request: neither is served.
		{key: kmsg.AddPartitionsToTxn, min: 0, max: 3, handle: s.addPartitionsToTxn, fail: failAddPartitionsToTxn, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: write, scope: scopeTopics, deny: txnDenied},
		{key: kmsg.AddOffsetsToTxn, min: 0, max: 3, handle: s.addOffsetsToTxn, fail: failAddOffsetsToTxn, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: write, deny: txnDenied},
		{key: kmsg.EndTxn, min: 0, max: 3, handle: s.endTxn, fail: failEndTxn, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: write, deny: txnDenied},
		{key: kmsg.TxnOffsetCommit, min: 0, max: 3, handle: s.txnOffsetCommit, fail: failTxnOffsetCommit, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: write, scope: scopeTopics, deny: txnDenied},
		{key: kmsg.DescribeTransactions, min: 0, max: 0, handle: s.describeTransactions, fail: failDescribeTransactions, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, scope: scopeTxns, deny: txnDenied},
		{key: kmsg.ListTransactions, min: 0, max: 1, handle: s.listTransactions, fail: failListTransactions, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, scope: scopeTxns, deny: txnDenied},
		// Administration, and committed offsets (with or without group
		// membership).
		{key: kmsg.CreateTopics, min: 2, max: 7, handle: s.createTopics, fail: failCreateTopics, waits: true, notReady: kerr.LeaderNotAvailable.Code, role: admin, scope: scopeCreate, deny: topicDenied},
		{key: kmsg.DeleteTopics, min: 0, max: 6, handle: s.deleteTopics, fail: failDeleteTopics, notReady: kerr.LeaderNotAvailable.Code, role: admin, scope: scopeTopics, deny: topicDenied},
		// Records below an offset (deleterecords.go): Kafka checks DELETE
		// on the topic, which is PyStream's admin role.
		{key: kmsg.DeleteRecords, min: 0, max: 2, handle: s.deleteRecords, fail: failDeleteRecords, notReady: kerr.LeaderNotAvailable.Code, role: admin, scope: scopeTopics, deny: topicDenied},
		// Growing a topic (createpartitions.go).
		{key: kmsg.CreatePartitions, min: 0, max: 3, handle: s.createPartitions, fail: failCreatePartitions, waits: true, notReady: kerr.LeaderNotAvailable.Code, role: admin, scope: scopeTopics, deny: topicDenied},
		// Configurations (configs.go): topics' per topic, brokers' read-only.
		{key: kmsg.DescribeConfigs, min: 0, max: 4, handle: s.describeConfigs, fail: failDescribeConfigs, notReady: kerr.LeaderNotAvailable.Code, role: read, scope: scopeConfigs, deny: topicDenied},
		{key: kmsg.AlterConfigs, min: 0, max: 2, handle: s.alterConfigs, fail: failAlterConfigs, notReady: kerr.LeaderNotAvailable.Code, role: admin, scope: scopeConfigs, deny: topicDenied},
		{key: kmsg.IncrementalAlterConfigs, min: 0, max: 1, handle: s.incrementalAlterConfigs, fail: failIncrementalAlterConfigs, notReady: kerr.LeaderNotAvailable.Code, role: admin, scope: scopeConfigs, deny: topicDenied},
		{key: kmsg.FindCoordinator, min: 0, max: 4, handle: s.findCoordinator, fail: failFindCoordinator, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, deny: groupDenied},
		{key: kmsg.OffsetCommit, min: 0, max: 8, handle: s.offsetCommit, fail: failOffsetCommit, notReady: kerr.CoordinatorLoadInProgress.Code, role: write, scope: scopeTopics, deny: groupDenied},
		{key: kmsg.OffsetFetch, min: 0, max: 8, handle: s.offsetFetch, fail: failOffsetFetch, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, scope: scopeTopics, deny: groupDenied},
		// Consumer groups: Kafka's classic protocol (groups.go).
		{key: kmsg.JoinGroup, min: 0, max: 9, handle: s.joinGroup, fail: failJoinGroup, coordinated: true, waits: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, deny: groupDenied},
		{key: kmsg.SyncGroup, min: 0, max: 5, handle: s.syncGroup, fail: failSyncGroup, coordinated: true, waits: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, deny: groupDenied},
		{key: kmsg.Heartbeat, min: 0, max: 4, handle: s.heartbeat, fail: failHeartbeat, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, deny: groupDenied},
		{key: kmsg.LeaveGroup, min: 0, max: 5, handle: s.leaveGroup, fail: failLeaveGroup, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, deny: groupDenied},
		{key: kmsg.DescribeGroups, min: 0, max: 5, handle: s.describeGroups, fail: failDescribeGroups, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, scope: scopeGroups, deny: groupDenied},
		{key: kmsg.ListGroups, min: 0, max: 5, handle: s.listGroups, fail: failListGroups, notReady: kerr.CoordinatorLoadInProgress.Code, role: read, scope: scopeGroups, deny: groupDenied},
		// The cluster's id, controller and brokers (describecluster.go).
		{key: kmsg.DescribeCluster, min: 0, max: 1, handle: s.describeCluster, fail: failDescribeCluster, notReady: kerr.LeaderNotAvailable.Code, role: read, deny: kerr.ClusterAuthorizationFailed.Code},
		// Deleting groups and their offsets (deletegroups.go,
		// offsetdelete.go): served where groups are coordinated.
		{key: kmsg.DeleteGroups, min: 0, max: 2, handle: s.deleteGroups, fail: failDeleteGroups, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: admin, scope: scopeGroups, deny: groupDenied},
		{key: kmsg.OffsetDelete, min: 0, max: 0, handle: s.offsetDelete, fail: failOffsetDelete, coordinated: true, notReady: kerr.CoordinatorLoadInProgress.Code, role: admin, scope: scopeTopics, deny: groupDenied},
		// Each broker's log directory (describelogdirs.go), and leaders
		// handed back to preferred replicas (electleaders.go).
		{key: kmsg.DescribeLogDirs, min: 0, max: 4, handle: s.describeLogDirs, fail: failDescribeLogDirs, notReady: kerr.LeaderNotAvailable.Code, role: read, scope: scopeTopics, deny: kerr.ClusterAuthorizationFailed.Code},
		{key: kmsg.ElectLeaders, min: 0, max: 2, handle: s.electLeaders, fail: failElectLeaders, notReady: kerr.LeaderNotAvailable.Code, role: admin, scope: scopeCluster, deny: kerr.ClusterAuthorizationFailed.Code},
	}
	if s.cfg.Auth != nil {
		// Authentication (sasl.go): served, and advertised, only with an
		// auth file; without one a client asking for SASL is refused as
		// before.
		t = append(t,
			api{key: kmsg.SASLHandshake, min: 0, max: 1, handle: s.saslHandshake, fail: failSASLHandshake, role: auth.RoleOpen},
			api{key: kmsg.SASLAuthenticate, min: 0, max: 2, handle: s.saslAuthenticate, fail: failSASLAuthenticate, role: auth.RoleOpen})
	}
	return t
}

// exchange is one request being answered: the broker whose listener it
// reached, the client's address and id, the error codes its answer
// carries (for the metrics), and why (refusal.go).
type exchange struct {
	s        *Server
	broker   int
	ctx      context.Context
	remote   net.Addr
	clientID *string
	codes    []int16
	// reasons are the codes' reasons (explain), the ErrorMessage of the
	// items refused with them; notes what the refusal's log line adds
	// for the server's operator only (note), at Warn when warn (fault).
	reasons []codeReason
	notes   []any
	warn    bool
	// logged says the refusal was logged already, rate-limited with the
	// connection refusals (a failed SASL authentication): logRefused
	// writes no line of its own.
	logged bool
	// c is the connection, whose SASL state the SASL APIs change.
	c *conn
}

// code records a non-zero error code of the answer and returns it.
func (x *exchange) code(c int16) int16 {
	if c != 0 {
		x.codes = append(x.codes, c)
	}
	return c
}
