package kafka

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
)

// Authorization of every API, by server/auth's one rule (auth.Decide),
// the same as over HTTP (docs/security.md § Authentication and roles):
//
//   - read, write, admin: each API's role is its row's in the handler
//     table (handlers.go), each role taking what the roles below it take;
//     docs/kafka.md lists them.
//   - Topic prefixes apply per topic, each refused item answered
//     TOPIC_AUTHORIZATION_FAILED while the others are served; Metadata
//     for every topic and OffsetFetch for every committed topic leave out
//     what the principal may not reach. Creating a topic needs a
//     principal without prefixes, as POST /api/topics does.
//   - Transactions: write for InitProducerID, AddPartitionsToTxn,
//     AddOffsetsToTxn, EndTxn and TxnOffsetCommit; read for
//     ListTransactions and DescribeTransactions. A transactional id is
//     scoped by the same prefixes as a topic's, as Kafka checks WRITE
//     (DESCRIBE) on it: another is TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
//     left out of ListTransactions and refused id by id by
//     DescribeTransactions; a transaction's topics and group are checked
//     as a produce's and a commit's, and AddPartitionsToTxn with a refused
//     topic adds none (the others OPERATION_NOT_ATTEMPTED), as Kafka
//     answers it.
//   - A group's name is scoped by the same prefixes as a topic's, as
//     Kafka checks READ on the group: a principal limited to "pay" may
//     join, sync, heartbeat in, leave, commit for and fetch the offsets
//     of groups whose names start with "pay" only (another group's
//     request is answered GROUP_AUTHORIZATION_FAILED whole, so that no
//     stranger can force another team's group to rebalance or read its
//     progress); ListGroups shows it those groups only, and DescribeGroups
//     refuses the others, group by group. Its commits and fetches of
//     offsets are also checked topic by topic. FindCoordinator says only
//     which broker coordinates a name and is not scoped.
//   - DescribeLogDirs: read (Kafka checks DESCRIBE on the cluster); a
//     principal limited to prefixes is shown its topics' replicas only.
//     ElectLeaders: admin without prefixes (Kafka checks ALTER on the
//     cluster), CLUSTER_AUTHORIZATION_FAILED otherwise.
//   - Configurations: read for DescribeConfigs, admin for AlterConfigs
//     and IncrementalAlterConfigs. A topic resource is checked as a
//     topic, each refused one TOPIC_AUTHORIZATION_FAILED while the others
//     are served; a broker resource (settings of the whole server, no
//     topic's data) is described to any reader, and altering one by a
//     principal limited to prefixes is CLUSTER_AUTHORIZATION_FAILED, as
//     Kafka checks the cluster's rights. A role too small refuses every
//     resource, a broker's with CLUSTER_AUTHORIZATION_FAILED
//     (resourceDenied).
//
// A role below the API's answers the whole request with the API's deny
// code through its fail function (per item where it has items).

// scope is how an API's request is checked past its role.
type scope uint8

const (
	// scopeNone: the role alone (ApiVersions, SASL, group membership,
	// FindCoordinator).
	scopeNone scope = iota
	// scopeTopics: each topic the request names (or the answer lists).
	scopeTopics
	// scopeCreate: each topic, which a principal with prefixes may not
	// create.
	scopeCreate
	// scopeGroups: a view of groups as a whole.
	scopeGroups
	// scopeTxns: a view of transactional ids (ListTransactions,
	// DescribeTransactions).
	scopeTxns
	// scopeConfigs: each resource of a configuration request, by its
	// type (screenConfigs).
	scopeConfigs
	// scopeCluster: the cluster as a whole, which a principal limited to
	// topic prefixes may not change (ElectLeaders): refused with the
	// API's deny code.
	scopeCluster
)

// screen applies p's rights to req (a served version, already decoded)
// before its handler. deny non-zero refuses the whole request: answer
// a.fail(req, deny), reason saying why. Otherwise screen has removed from
// req the items p may not reach, and after, when not nil, adds their
// refusals to the handler's answer and leaves out of it what p may not
// see; reason then says which names p may reach, the ErrorMessage of
// those refusals.
func screen(a *api, p *auth.Token, req kmsg.Request) (deny int16, reason string, after func(kmsg.Response)) {
	if a.role == auth.RoleOpen {
		return 0, "", nil
	}
	txnID, transactional := transactionalIDOf(req)
	if p.Role < a.role {
		reason = fmt.Sprintf("principal %q has role %s; %s needs %s", p.Name, p.Role, a.key.Name(), a.role)
		if transactional {
			// InitProducerID's is CLUSTER_AUTHORIZATION_FAILED for an
			// idempotent producer, this for a transactional one.
			return kerr.TransactionalIDAuthorizationFailed.Code, reason, nil
		}
		return a.deny, reason, nil
	}
	if len(p.Prefixes) == 0 {
		return 0, "", nil
	}
	may := func(name string) bool { return auth.Decide(p, a.role, name, true) == auth.DenyNone }
	reason = fmt.Sprintf("principal %q may reach names starting with %s only", p.Name, quoteAll(p.Prefixes))
	if group, ok := groupOf(req); ok && !may(group) {
		return kerr.GroupAuthorizationFailed.Code, fmt.Sprintf("%s: not group %q", reason, group), nil
	}
	if transactional && !may(txnID) {
		return kerr.TransactionalIDAuthorizationFailed.Code, fmt.Sprintf("%s: not transactional id %q", reason, txnID), nil
	}
	if a.scope == scopeCluster {
		return a.deny, fmt.Sprintf("principal %q is limited to topic prefixes; %s acts on the whole cluster", p.Name, a.key.Name()), nil
	}
	return 0, reason, screenItems(a, req, may)
}

// quoteAll is names quoted and joined with ", ".
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// screenItems is screen past the role, the group and the transactional
// id: the items of req p may not reach (may), by a's scope.
func screenItems(a *api, req kmsg.Request, may func(string) bool) (after func(kmsg.Response)) {
	denied := kerr.TopicAuthorizationFailed.Code
	switch a.scope {
	case scopeCreate:
		return screenCreate(req.(*kmsg.CreateTopicsRequest))
	case scopeGroups:
		return screenGroups(req, may)
	case scopeTxns:
		return screenTxns(req, may)
	case scopeConfigs:
		return screenConfigs(req, may)
	case scopeCluster, scopeNone:
		return nil
	}
	switch r := req.(type) {
	case *kmsg.MetadataRequest:
		// Every topic (nil, or none at v0) or some: either way the answer
		// keeps only what p may reach (v0 cannot ask for "none", so a
		// request whose every topic is refused is answered from the whole
		// list, filtered), and each refused topic is named back.
		var out []kmsg.MetadataRequestTopic
		if r.Topics != nil {
			r.Topics, out = split(r.Topics, func(t kmsg.MetadataRequestTopic) bool { return t.Topic != nil && may(*t.Topic) })
		}
		return func(resp kmsg.Response) {
			m := resp.(*kmsg.MetadataResponse)
			m.Topics = keep(m.Topics, func(t kmsg.MetadataResponseTopic) bool { return t.Topic != nil && may(*t.Topic) })
			for _, t := range out {
				mt := kmsg.NewMetadataResponseTopic()
				mt.Topic, mt.TopicID, mt.ErrorCode = t.Topic, t.TopicID, denied
				m.Topics = append(m.Topics, mt)
			}
		}
	case *kmsg.ProduceRequest:
		var out []kmsg.ProduceRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.ProduceRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			if resp == nil { // acks=0: no answer
				return
			}
			f := failProduce(&kmsg.ProduceRequest{Version: r.Version, Topics: out}, denied).(*kmsg.ProduceResponse)
			resp.(*kmsg.ProduceResponse).Topics = append(resp.(*kmsg.ProduceResponse).Topics, f.Topics...)
		}
	case *kmsg.FetchRequest:
		var out []kmsg.FetchRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.FetchRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			f := resp.(*kmsg.FetchResponse)
			for _, t := range out {
				rt := kmsg.NewFetchResponseTopic()
				rt.Topic, rt.TopicID = t.Topic, t.TopicID
				for _, p := range t.Partitions {
					rp := kmsg.NewFetchResponseTopicPartition()
					rp.Partition, rp.ErrorCode = p.Partition, denied
					rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
					rt.Partitions = append(rt.Partitions, rp)
				}
				f.Topics = append(f.Topics, rt)
			}
		}
	case *kmsg.ListOffsetsRequest:
		var out []kmsg.ListOffsetsRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.ListOffsetsRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			f := failListOffsets(&kmsg.ListOffsetsRequest{Version: r.Version, Topics: out}, denied).(*kmsg.ListOffsetsResponse)
			resp.(*kmsg.ListOffsetsResponse).Topics = append(resp.(*kmsg.ListOffsetsResponse).Topics, f.Topics...)
		}
	case *kmsg.OffsetForLeaderEpochRequest:
		var out []kmsg.OffsetForLeaderEpochRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.OffsetForLeaderEpochRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			f := failOffsetForLeaderEpoch(&kmsg.OffsetForLeaderEpochRequest{Version: r.Version, Topics: out}, denied).(*kmsg.OffsetForLeaderEpochResponse)
			resp.(*kmsg.OffsetForLeaderEpochResponse).Topics = append(resp.(*kmsg.OffsetForLeaderEpochResponse).Topics, f.Topics...)
		}
	case *kmsg.DeleteRecordsRequest:
		var out []kmsg.DeleteRecordsRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.DeleteRecordsRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			f := failDeleteRecords(&kmsg.DeleteRecordsRequest{Version: r.Version, Topics: out}, denied).(*kmsg.DeleteRecordsResponse)
			resp.(*kmsg.DeleteRecordsResponse).Topics = append(resp.(*kmsg.DeleteRecordsResponse).Topics, f.Topics...)
		}
	case *kmsg.OffsetCommitRequest:
		var out []kmsg.OffsetCommitRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.OffsetCommitRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			f := failOffsetCommit(&kmsg.OffsetCommitRequest{Version: r.Version, Topics: out}, denied).(*kmsg.OffsetCommitResponse)
			resp.(*kmsg.OffsetCommitResponse).Topics = append(resp.(*kmsg.OffsetCommitResponse).Topics, f.Topics...)
		}
	case *kmsg.OffsetFetchRequest:
		return screenOffsetFetch(r, may, denied)
	case *kmsg.TxnOffsetCommitRequest:
		var out []kmsg.TxnOffsetCommitRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			f := failTxnOffsetCommit(&kmsg.TxnOffsetCommitRequest{Version: r.Version, Topics: out}, denied).(*kmsg.TxnOffsetCommitResponse)
			resp.(*kmsg.TxnOffsetCommitResponse).Topics = append(resp.(*kmsg.TxnOffsetCommitResponse).Topics, f.Topics...)
		}
	case *kmsg.AddPartitionsToTxnRequest:
		// As Kafka does, a refused topic adds nothing: the others are
		// OPERATION_NOT_ATTEMPTED.
		in, out := split(r.Topics, func(t kmsg.AddPartitionsToTxnRequestTopic) bool { return may(t.Topic) })
		if len(out) == 0 {
			return nil
		}
		r.Topics = nil
		return func(resp kmsg.Response) {
			a := resp.(*kmsg.AddPartitionsToTxnResponse)
			a.Topics = append(failAddPartitionsToTxn(&kmsg.AddPartitionsToTxnRequest{Version: r.Version, Topics: in}, kerr.OperationNotAttempted.Code).(*kmsg.AddPartitionsToTxnResponse).Topics,
				failAddPartitionsToTxn(&kmsg.AddPartitionsToTxnRequest{Version: r.Version, Topics: out}, denied).(*kmsg.AddPartitionsToTxnResponse).Topics...)
		}
	case *kmsg.OffsetDeleteRequest:
		var out []kmsg.OffsetDeleteRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.OffsetDeleteRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			o := resp.(*kmsg.OffsetDeleteResponse)
			if o.ErrorCode != 0 {
				return // the group's refusal answers the whole request
			}
			for _, t := range out {
				rt := kmsg.NewOffsetDeleteResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetDeleteResponseTopicPartition()
					rp.Partition, rp.ErrorCode = p.Partition, denied
					rt.Partitions = append(rt.Partitions, rp)
				}
				o.Topics = append(o.Topics, rt)
			}
		}
	case *kmsg.DescribeLogDirsRequest:
		// Kafka's answer has no refusal per topic: a topic p may not
		// reach is left out, as one the broker does not hold.
		return func(resp kmsg.Response) {
			for i := range resp.(*kmsg.DescribeLogDirsResponse).Dirs {
				d := &resp.(*kmsg.DescribeLogDirsResponse).Dirs[i]
				d.Topics = keep(d.Topics, func(t kmsg.DescribeLogDirsResponseDirTopic) bool { return may(t.Topic) })
			}
		}
	case *kmsg.CreatePartitionsRequest:
		var out []kmsg.CreatePartitionsRequestTopic
		r.Topics, out = split(r.Topics, func(t kmsg.CreatePartitionsRequestTopic) bool { return may(t.Topic) })
		return func(resp kmsg.Response) {
			f := failCreatePartitions(&kmsg.CreatePartitionsRequest{Version: r.Version, Topics: out}, denied).(*kmsg.CreatePartitionsResponse)
			for i := range f.Topics {
				f.Topics[i].ErrorMessage = kmsg.StringPtr(fmt.Sprintf("the principal may not reach topic %q", f.Topics[i].Topic))
			}
			resp.(*kmsg.CreatePartitionsResponse).Topics = append(resp.(*kmsg.CreatePartitionsResponse).Topics, f.Topics...)
		}
	case *kmsg.DeleteTopicsRequest:
		var outNames []string
		var out []kmsg.DeleteTopicsRequestTopic
		r.TopicNames, outNames = split(r.TopicNames, may)
		r.Topics, out = split(r.Topics, func(t kmsg.DeleteTopicsRequestTopic) bool { return t.Topic != nil && may(*t.Topic) })
		return func(resp kmsg.Response) {
			f := failDeleteTopics(&kmsg.DeleteTopicsRequest{Version: r.Version, TopicNames: outNames, Topics: out}, denied).(*kmsg.DeleteTopicsResponse)
			resp.(*kmsg.DeleteTopicsResponse).Topics = append(resp.(*kmsg.DeleteTopicsResponse).Topics, f.Topics...)
		}
	}
	return nil
}

// screenCreate refuses every topic of a CreateTopics from a principal
// limited to prefixes (the caller checked that it has some).
func screenCreate(r *kmsg.CreateTopicsRequest) func(kmsg.Response) {
	out := r.Topics
	r.Topics = nil
	return func(resp kmsg.Response) {
		f := failCreateTopics(&kmsg.CreateTopicsRequest{Version: r.Version, Topics: out}, kerr.TopicAuthorizationFailed.Code).(*kmsg.CreateTopicsResponse)
		for i := range f.Topics {
			f.Topics[i].ErrorMessage = kmsg.StringPtr("a principal limited to topic prefixes may not create topics")
			f.Topics[i].NumPartitions, f.Topics[i].ReplicationFactor = -1, -1
		}
		resp.(*kmsg.CreateTopicsResponse).Topics = append(resp.(*kmsg.CreateTopicsResponse).Topics, f.Topics...)
	}
}

// groupOf is the one group a request acts on or asks about, when it
// names one: the group membership APIs, OffsetCommit, and OffsetFetch
// before v8 (v8 names several, checked group by group).
func groupOf(req kmsg.Request) (string, bool) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		return r.Group, true
	case *kmsg.SyncGroupRequest:
		return r.Group, true
	case *kmsg.HeartbeatRequest:
		return r.Group, true
	case *kmsg.LeaveGroupRequest:
		return r.Group, true
	case *kmsg.OffsetCommitRequest:
		return r.Group, true
	case *kmsg.OffsetFetchRequest:
		return r.Group, r.Version < 8
	case *kmsg.AddOffsetsToTxnRequest:
		return r.Group, true
	case *kmsg.TxnOffsetCommitRequest:
		return r.Group, true
	case *kmsg.OffsetDeleteRequest:
		return r.Group, true
	}
	return "", false
}

// transactionalIDOf is the transactional id a request acts for, when it
// names one: InitProducerID with one, and the transaction requests.
func transactionalIDOf(req kmsg.Request) (string, bool) {
	switch r := req.(type) {
	case *kmsg.InitProducerIDRequest:
		return deref(r.TransactionalID), r.TransactionalID != nil
	case *kmsg.AddPartitionsToTxnRequest:
		return r.TransactionalID, true
	case *kmsg.AddOffsetsToTxnRequest:
		return r.TransactionalID, true
	case *kmsg.EndTxnRequest:
		return r.TransactionalID, true
	case *kmsg.TxnOffsetCommitRequest:
		return r.TransactionalID, true
	}
	return "", false
}

// configRefusal is a configuration resource refused by screenConfigs.
type configRefusal struct {
	typ  kmsg.ConfigResourceType
	name string
	code int16
	msg  string
}

// screenConfigs checks each resource of a configuration request for a
// principal limited to prefixes: a topic it may not reach, and for an
// alter any broker, are taken out of the request and answered refused.
func screenConfigs(req kmsg.Request, may func(string) bool) func(kmsg.Response) {
	refuse := func(typ kmsg.ConfigResourceType, name string, alter bool) (configRefusal, bool) {
		switch {
		case typ == kmsg.ConfigResourceTypeTopic && !may(name):
			return configRefusal{typ, name, kerr.TopicAuthorizationFailed.Code, fmt.Sprintf("the principal may not reach topic %q", name)}, true
		case typ == kmsg.ConfigResourceTypeBroker && alter:
			return configRefusal{typ, name, kerr.ClusterAuthorizationFailed.Code, "a principal limited to topic prefixes may not alter a broker's configuration"}, true
		}
		return configRefusal{}, false
	}
	var out []configRefusal
	screenOut := func(typ kmsg.ConfigResourceType, name string, alter bool) bool {
		f, refused := refuse(typ, name, alter)
		if refused {
			out = append(out, f)
		}
		return !refused
	}
	switch r := req.(type) {
	case *kmsg.DescribeConfigsRequest:
		r.Resources = keep(r.Resources, func(res kmsg.DescribeConfigsRequestResource) bool {
			return screenOut(res.ResourceType, res.ResourceName, false)
		})
		return func(resp kmsg.Response) {
			d := resp.(*kmsg.DescribeConfigsResponse)
			for _, f := range out {
				rr := kmsg.NewDescribeConfigsResponseResource()
				rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = f.typ, f.name, f.code, kmsg.StringPtr(f.msg)
				d.Resources = append(d.Resources, rr)
			}
		}
	case *kmsg.AlterConfigsRequest:
		r.Resources = keep(r.Resources, func(res kmsg.AlterConfigsRequestResource) bool {
			return screenOut(res.ResourceType, res.ResourceName, true)
		})
		return func(resp kmsg.Response) {
			a := resp.(*kmsg.AlterConfigsResponse)
			for _, f := range out {
				rr := kmsg.NewAlterConfigsResponseResource()
				rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = f.typ, f.name, f.code, kmsg.StringPtr(f.msg)
				a.Resources = append(a.Resources, rr)
			}
		}
	case *kmsg.IncrementalAlterConfigsRequest:
		r.Resources = keep(r.Resources, func(res kmsg.IncrementalAlterConfigsRequestResource) bool {
			return screenOut(res.ResourceType, res.ResourceName, true)
		})
		return func(resp kmsg.Response) {
			a := resp.(*kmsg.IncrementalAlterConfigsResponse)
			for _, f := range out {
				rr := kmsg.NewIncrementalAlterConfigsResponseResource()
				rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = f.typ, f.name, f.code, kmsg.StringPtr(f.msg)
				a.Resources = append(a.Resources, rr)
			}
		}
	}
	return nil
}

// screenTxns answers a view of transactional ids to a principal limited
// to prefixes: the ids it may reach listed, the others described as
// refused.
func screenTxns(req kmsg.Request, may func(string) bool) func(kmsg.Response) {
	switch r := req.(type) {
	case *kmsg.ListTransactionsRequest:
		return func(resp kmsg.Response) {
			l := resp.(*kmsg.ListTransactionsResponse)
			l.TransactionStates = keep(l.TransactionStates, func(t kmsg.ListTransactionsResponseTransactionState) bool { return may(t.TransactionalID) })
		}
	case *kmsg.DescribeTransactionsRequest:
		var out []string
		r.TransactionalIDs, out = split(r.TransactionalIDs, may)
		return func(resp kmsg.Response) {
			f := failDescribeTransactions(&kmsg.DescribeTransactionsRequest{Version: r.Version, TransactionalIDs: out}, kerr.TransactionalIDAuthorizationFailed.Code).(*kmsg.DescribeTransactionsResponse)
			resp.(*kmsg.DescribeTransactionsResponse).TransactionStates = append(resp.(*kmsg.DescribeTransactionsResponse).TransactionStates, f.TransactionStates...)
		}
	}
	return nil
}

// screenGroups answers a view of groups to a principal limited to
// prefixes: the groups it may reach listed, the others described as
// refused.
func screenGroups(req kmsg.Request, may func(string) bool) func(kmsg.Response) {
	switch r := req.(type) {
	case *kmsg.ListGroupsRequest:
		return func(resp kmsg.Response) {
			l := resp.(*kmsg.ListGroupsResponse)
			l.Groups = keep(l.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return may(g.Group) })
		}
	case *kmsg.DescribeGroupsRequest:
		var out []string
		r.Groups, out = split(r.Groups, may)
		return func(resp kmsg.Response) {
			f := failDescribeGroups(&kmsg.DescribeGroupsRequest{Version: r.Version, Groups: out}, kerr.GroupAuthorizationFailed.Code).(*kmsg.DescribeGroupsResponse)
			resp.(*kmsg.DescribeGroupsResponse).Groups = append(resp.(*kmsg.DescribeGroupsResponse).Groups, f.Groups...)
		}
	case *kmsg.DeleteGroupsRequest:
		var out []string
		r.Groups, out = split(r.Groups, may)
		return func(resp kmsg.Response) {
			f := failDeleteGroups(&kmsg.DeleteGroupsRequest{Version: r.Version, Groups: out}, kerr.GroupAuthorizationFailed.Code).(*kmsg.DeleteGroupsResponse)
			resp.(*kmsg.DeleteGroupsResponse).Groups = append(resp.(*kmsg.DeleteGroupsResponse).Groups, f.Groups...)
		}
	}
	return nil
}

// screenOffsetFetch checks an OffsetFetch topic by topic: v0-v7 for one
// group, v8 for several; a group asked for every topic (nil) has the
// topics p may not reach left out of its answer.
func screenOffsetFetch(r *kmsg.OffsetFetchRequest, may func(string) bool, denied int16) func(kmsg.Response) {
	refuse := func(out []kmsg.OffsetFetchRequestTopic) []kmsg.OffsetFetchResponseTopic {
		var ts []kmsg.OffsetFetchResponseTopic
		for _, t := range out {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.ErrorCode = p, -1, denied
				rt.Partitions = append(rt.Partitions, rp)
			}
			ts = append(ts, rt)
		}
		return ts
	}
	// The answer keeps only what p may reach, whatever was asked (every
	// topic, nil, or some), and names each refused topic back.
	mayTopic := func(t kmsg.OffsetFetchResponseTopic) bool { return may(t.Topic) }
	if r.Version < 8 {
		var out []kmsg.OffsetFetchRequestTopic
		if r.Topics != nil {
			r.Topics, out = split(r.Topics, func(t kmsg.OffsetFetchRequestTopic) bool { return may(t.Topic) })
		}
		return func(resp kmsg.Response) {
			f := resp.(*kmsg.OffsetFetchResponse)
			f.Topics = append(keep(f.Topics, mayTopic), refuse(out)...)
		}
	}
	var refusedGroups []kmsg.OffsetFetchRequestGroup
	r.Groups, refusedGroups = split(r.Groups, func(g kmsg.OffsetFetchRequestGroup) bool { return may(g.Group) })
	out := map[string][]kmsg.OffsetFetchRequestTopic{}
	for i := range r.Groups {
		g := &r.Groups[i]
		if g.Topics == nil {
			continue
		}
		var o []kmsg.OffsetFetchRequestGroupTopic
		g.Topics, o = split(g.Topics, func(t kmsg.OffsetFetchRequestGroupTopic) bool { return may(t.Topic) })
		for _, t := range o {
			out[g.Group] = append(out[g.Group], kmsg.OffsetFetchRequestTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	return func(resp kmsg.Response) {
		f := resp.(*kmsg.OffsetFetchResponse)
		refused := failOffsetFetch(&kmsg.OffsetFetchRequest{Version: r.Version, Groups: refusedGroups}, kerr.GroupAuthorizationFailed.Code).(*kmsg.OffsetFetchResponse)
		defer func() { f.Groups = append(f.Groups, refused.Groups...) }()
		for i := range f.Groups {
			g := &f.Groups[i]
			g.Topics = keep(g.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool { return may(t.Topic) })
			for _, t := range refuse(out[g.Group]) {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p.Partition, -1, p.ErrorCode
					rt.Partitions = append(rt.Partitions, rp)
				}
				g.Topics = append(g.Topics, rt)
			}
		}
	}
}

// split divides items into those ok accepts and the others, keeping
// order; a nil input stays nil on both sides.
func split[T any](items []T, ok func(T) bool) (in, out []T) {
	for _, it := range items {
		if ok(it) {
			in = append(in, it)
		} else {
			out = append(out, it)
		}
	}
	if items != nil && in == nil {
		in = []T{}
	}
	return in, out
}

// keep is the items ok accepts.
func keep[T any](items []T, ok func(T) bool) []T {
	in, _ := split(items, ok)
	return in
}

// clusterOperationAPIs lists, for each operation on Kafka's CLUSTER
// resource, the APIs that need it (KIP-430's authorized operations).
// CLUSTER_ACTION is a broker's own, never a client's.
var clusterOperationAPIs = []struct {
	op   kmsg.ACLOperation
	keys []kmsg.Key
}{
	{kmsg.ACLOperationDescribe, []kmsg.Key{kmsg.DescribeCluster, kmsg.DescribeACLs, kmsg.DescribeLogDirs, kmsg.DescribeUserSCRAMCredentials}},
	{kmsg.ACLOperationCreate, []kmsg.Key{kmsg.CreateTopics}},
	{kmsg.ACLOperationIdempotentWrite, []kmsg.Key{kmsg.InitProducerID}},
	{kmsg.ACLOperationDescribeConfigs, []kmsg.Key{kmsg.DescribeConfigs}},
	{kmsg.ACLOperationAlterConfigs, []kmsg.Key{kmsg.AlterConfigs, kmsg.IncrementalAlterConfigs}},
	{kmsg.ACLOperationAlter, []kmsg.Key{kmsg.CreateACLs, kmsg.DeleteACLs, kmsg.AlterReplicaLogDirs, kmsg.ElectLeaders, kmsg.AlterPartitionAssignments, kmsg.AlterUserSCRAMCredentials}},
}

// clusterOperations is the bitfield of Kafka's authorized operations on
// the cluster (bit n set for operation code n) that x's principal may do
// here: each operation some API the listener serves needs, whose row's
// role the principal has (every role without an auth file). CREATE is
// also refused to a principal limited to topic prefixes, who may create
// no topic (scopeCreate).
func (s *Server) clusterOperations(x *exchange) int32 {
	var p *auth.Token
	if x.c != nil {
		p = x.c.principal
	}
	rows := map[kmsg.Key]api{}
	for _, a := range s.table() {
		rows[a.key] = a
	}
	var ops int32
	for _, o := range clusterOperationAPIs {
		for _, k := range o.keys {
			a, served := rows[k]
			if !served {
				continue
			}
			if p != nil && (p.Role < a.role || ((a.scope == scopeCreate || a.scope == scopeCluster) && len(p.Prefixes) > 0)) {
				continue
			}
			ops |= 1 << o.op
			break
		}
	}
	return ops
}
