package kafka

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/topic"
)

// Configurations over Kafka: DescribeConfigs (key 32) v0-v4, AlterConfigs
// (key 33) v0-v2 and IncrementalAlterConfigs (key 44) v0-v1, for what
// kafka-configs, kadm, sarama's ClusterAdmin and the Java Admin client ask
// about (docs/kafka-admin.md § Configurations).
//
//   - A topic (resource type 2) has the keys of package topic
//     (topic.ConfigKeys), each described with its value, DYNAMIC_TOPIC_CONFIG
//     when the topic overrides it, otherwise the server-wide default's
//     source (configDefaultSource). Every check of a key or value is
//     package topic's, reached through the backend (AlterTopicConfig) or
//     topic.AlterConfigOverrides for validate_only: a refused key changes
//     nothing of its resource.
//   - A broker (resource type 4, named by its id, or "" for the defaults
//     of every broker) is described with the few settings of brokerConfigs,
//     read-only: they are set when the server starts, and altering them is
//     refused with INVALID_REQUEST, as Kafka refuses a config it cannot
//     change at run time.
//   - Any other resource type is INVALID_REQUEST, resource by resource.

// configDocs is the documentation of every key PyStream describes: one
// sentence of its own each, DescribeConfigs' Documentation (v3+).
var configDocs = map[string]string{
	topic.RetentionMsKey:          "How long the topic keeps a record, in milliseconds; older segments are deleted. Allowed: " + topic.ConfigAllowed(topic.RetentionMsKey) + ".",
	topic.RetentionBytesKey:       "How many bytes each replica of a partition keeps before its oldest segments are deleted. Allowed: " + topic.ConfigAllowed(topic.RetentionBytesKey) + ".",
	topic.SegmentBytesKey:         "The size at which a partition's log starts a new segment. Allowed: " + topic.ConfigAllowed(topic.SegmentBytesKey) + ".",
	topic.SegmentMsKey:            "The age at which a partition's log starts a new segment, even if it is not full. Allowed: " + topic.ConfigAllowed(topic.SegmentMsKey) + ".",
	topic.MinInsyncReplicasKey:    "The fewest active (in-sync) replicas of a partition, the leader included, with which a write to it is taken; with fewer, a write is refused with NOT_ENOUGH_REPLICAS before anything is appended. Allowed: " + topic.ConfigAllowed(topic.MinInsyncReplicasKey) + " (a value above the replication factor is taken, as Kafka takes it, and refuses every write). As a broker config: the default of every topic that sets none, fixed when the server starts.",
	topic.CleanupPolicyKey:        "What happens to a partition's old segments: delete, by retention.ms and retention.bytes. Allowed: " + topic.ConfigAllowed(topic.CleanupPolicyKey) + "; PyStream has no log compaction yet.",
	topic.MaxMessageBytesKey:      "The largest record batch a producer may send to one of the topic's partitions, in bytes, measured as sent (compressed when it is, its header included); a larger one is refused with MESSAGE_TOO_LARGE. Each record's stored payload is also bounded by the server's per-record limit (1 MiB unless the server says otherwise), whatever this allows. Allowed: " + topic.ConfigAllowed(topic.MaxMessageBytesKey) + ".",
	topic.MessageTimestampTypeKey: "Which time a record's timestamp is: CreateTime, the producer's, or LogAppendTime, the time the partition's leader appended it (a fetch then answers every batch with the LogAppendTime attribute and the append time, and a produce answer carries the append time). Allowed: " + topic.ConfigAllowed(topic.MessageTimestampTypeKey) + ".",
	"log.cleanup.policy":          "The cleanup.policy of every topic that sets none, fixed when the server starts.",
	"log.message.timestamp.type":  "The message.timestamp.type of every topic that sets none, fixed when the server starts.",
	"log.retention.ms":            "The retention.ms of every topic that sets none, fixed when the server starts.",
	"log.retention.bytes":         "The retention.bytes of every topic that sets none, fixed when the server starts.",
	"log.segment.bytes":           "The segment.bytes of every topic that sets none, fixed when the server starts.",
	"log.roll.ms":                 "The segment.ms of every topic that sets none, fixed when the server starts.",
	"broker.id":                   "The id of this broker in the cluster.",
	"message.max.bytes":           "The max.message.bytes of every topic that sets none (the largest record batch a producer may send, as sent), fixed when the server starts.",
	"socket.request.max.bytes":    "The largest request this listener reads, in bytes; a larger one closes the connection.",
}

// topicDefaultKeys names each topic key's server-wide default as Kafka
// names the broker setting it falls back to: the synonym DescribeConfigs
// lists after a topic's own value.
var topicDefaultKeys = map[string]string{
	topic.RetentionMsKey:    "log.retention.ms",
	topic.RetentionBytesKey: "log.retention.bytes",
	topic.SegmentBytesKey:   "log.segment.bytes",
	topic.SegmentMsKey:      "log.roll.ms",
	// Kafka's broker setting has the topic key's name.
	topic.MinInsyncReplicasKey: "min.insync.replicas",
	topic.CleanupPolicyKey:     "log.cleanup.policy",
	// Kafka names the broker setting of max.message.bytes so.
	topic.MaxMessageBytesKey:      "message.max.bytes",
	topic.MessageTimestampTypeKey: "log.message.timestamp.type",
}

// topicConfigTypes is each topic key's type as DescribeConfigs (v3+)
// shows it.
var topicConfigTypes = map[string]kmsg.ConfigType{
	topic.RetentionMsKey:          kmsg.ConfigTypeLong,
	topic.RetentionBytesKey:       kmsg.ConfigTypeLong,
	topic.SegmentBytesKey:         kmsg.ConfigTypeLong,
	topic.SegmentMsKey:            kmsg.ConfigTypeLong,
	topic.MinInsyncReplicasKey:    kmsg.ConfigTypeInt,
	topic.CleanupPolicyKey:        kmsg.ConfigTypeList,
	topic.MaxMessageBytesKey:      kmsg.ConfigTypeInt,
	topic.MessageTimestampTypeKey: kmsg.ConfigTypeString,
}

// configEntry is one key as DescribeConfigs shows it.
type configEntry struct {
	name, value string
	source      kmsg.ConfigSource
	readOnly    bool
	typ         kmsg.ConfigType
	// synonyms are where the value comes from, the one used first
	// (Kafka's order): the key itself, then what it falls back to.
	synonyms []configSynonym
}

// configSynonym is one place a key's value comes from.
type configSynonym struct {
	name, value string
	source      kmsg.ConfigSource
}

// configDefaultSource is the source of a server-wide value: DEFAULT_CONFIG
// when it is PyStream's built-in one, STATIC_BROKER_CONFIG when the
// server was started with another (Kafka's answer for a key set in
// server.properties).
func configDefaultSource(value, builtIn string) kmsg.ConfigSource {
	if value == builtIn {
		return kmsg.ConfigSourceDefaultConfig
	}
	return kmsg.ConfigSourceStaticBrokerConfig
}

// topicConfigEntries describes a topic's every key: its overrides over
// the server-wide defaults.
func (s *Server) topicConfigEntries(x *exchange, name string) ([]configEntry, int16, string) {
	if err := topic.ValidateName(name); err != nil {
		return nil, kerr.InvalidTopicException.Code, err.Error()
	}
	overrides, err := s.c.TopicConfigOverrides(name)
	if err != nil {
		code, msg := s.configCode(x, err, name)
		return nil, code, msg
	}
	effective, err := s.c.TopicConfig(name)
	if err != nil {
		code, msg := s.configCode(x, err, name)
		return nil, code, msg
	}
	values, defaults, builtIn := effective.Strings(), s.c.TopicDefaults().Strings(), topic.DefaultConfig().Strings()
	var out []configEntry
	for _, key := range topic.ConfigKeys() {
		fallback := configSynonym{name: topicDefaultKeys[key], value: defaults[key], source: configDefaultSource(defaults[key], builtIn[key])}
		e := configEntry{name: key, value: values[key], source: fallback.source, typ: topicConfigTypes[key], synonyms: []configSynonym{fallback}}
		if _, ok := overrides[key]; ok {
			e.source = kmsg.ConfigSourceDynamicTopicConfig
			e.synonyms = []configSynonym{{name: key, value: values[key], source: e.source}, fallback}
		}
		out = append(out, e)
	}
	return out, 0, ""
}

// brokerConfigs are the settings a broker describes, as the broker the
// request reached (id) applies them: only values PyStream acts on, all
// fixed when the server starts. name "" (every broker's defaults) leaves
// out broker.id. A name other than id is INVALID_REQUEST, as Kafka
// answers a broker resource sent to another broker.
func (s *Server) brokerConfigs(id int, name string) ([]configEntry, int16, string) {
	if code, msg := checkBrokerName(id, name); code != 0 {
		return nil, code, msg
	}
	static := func(key, value, builtIn string, typ kmsg.ConfigType) configEntry {
		src := configDefaultSource(value, builtIn)
		return configEntry{name: key, value: value, source: src, readOnly: true, typ: typ, synonyms: []configSynonym{{name: key, value: value, source: src}}}
	}
	itoa := strconv.Itoa
	var out []configEntry
	if name != "" {
		e := static("broker.id", itoa(id), "-1", kmsg.ConfigTypeInt)
		out = append(out, e)
	}
	// message.max.bytes is the max.message.bytes of every topic that
	// sets none (topicDefaultKeys), as in Kafka.
	out = append(out,
		static("socket.request.max.bytes", strconv.FormatInt(int64(s.cfg.MaxRequestBytes), 10), strconv.FormatInt(int64(DefaultMaxRequestBytes), 10), kmsg.ConfigTypeInt))
	defaults, builtIn := s.c.TopicDefaults().Strings(), topic.DefaultConfig().Strings()
	for _, key := range topic.ConfigKeys() {
		out = append(out, static(topicDefaultKeys[key], defaults[key], builtIn[key], topicConfigTypes[key]))
	}
	slices.SortFunc(out, func(a, b configEntry) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return out, 0, ""
}

// checkBrokerName checks a broker resource's name against the broker the
// request reached: its id, or "" for every broker's defaults.
func checkBrokerName(id int, name string) (int16, string) {
	if name == "" {
		return 0, ""
	}
	n, err := strconv.Atoi(name)
	if err != nil {
		return kerr.InvalidRequest.Code, fmt.Sprintf("a broker resource is named by a broker id (or \"\" for every broker's defaults), not %q", name)
	}
	if n != id {
		return kerr.InvalidRequest.Code, fmt.Sprintf("this is broker %d: ask broker %d for its configuration", id, n)
	}
	return 0, ""
}

// describeConfigs answers DescribeConfigs (key 32) v0-v4: each resource's
// keys, or only the ConfigNames asked for (an unknown name is left out,
// as Kafka leaves it out), with synonyms and documentation when asked.
func (s *Server) describeConfigs(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		var entries []configEntry
		var code int16
		var msg string
		switch res.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			entries, code, msg = s.topicConfigEntries(x, res.ResourceName)
		case kmsg.ConfigResourceTypeBroker:
			entries, code, msg = s.brokerConfigs(x.broker, res.ResourceName)
		default:
			code, msg = kerr.InvalidRequest.Code, unknownResourceType(res.ResourceType)
		}
		if rr.ErrorCode = x.code(code); code != 0 {
			rr.ErrorMessage = kmsg.StringPtr(msg)
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		for _, e := range entries {
			if len(res.ConfigNames) > 0 && !slices.Contains(res.ConfigNames, e.name) {
				continue
			}
			rr.Configs = append(rr.Configs, e.describe(req))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// describe is e as req asks for it: synonyms and documentation only when
// asked.
func (e configEntry) describe(req *kmsg.DescribeConfigsRequest) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name, c.Value, c.ReadOnly, c.Source, c.ConfigType = e.name, kmsg.StringPtr(e.value), e.readOnly, e.source, e.typ
	c.IsDefault = e.source == kmsg.ConfigSourceDefaultConfig
	if req.IncludeSynonyms {
		for _, syn := range e.synonyms {
			cs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			cs.Name, cs.Value, cs.Source = syn.name, kmsg.StringPtr(syn.value), syn.source
			c.ConfigSynonyms = append(c.ConfigSynonyms, cs)
		}
	}
	if req.IncludeDocumentation {
		c.Documentation = kmsg.StringPtr(configDocs[e.name])
	}
	return c
}

// unknownResourceType is the message of a resource type PyStream has no
// configuration for.
func unknownResourceType(t kmsg.ConfigResourceType) string {
	return fmt.Sprintf("PyStream has configurations for topics (resource type 2) and brokers (4), not for resource type %d", int8(t))
}

// configChange is one resource's alteration in PyStream's terms, or the
// refusal of the request's configs (code, msg).
type configChange struct {
	set    map[string]string
	remove []string
	// replace: every override not in set goes back to its default
	// (AlterConfigs' whole-set semantics).
	replace bool
	code    int16
	msg     string
}

// resourceKey names a resource of a request, to find one named twice.
type resourceKey struct {
	typ  kmsg.ConfigResourceType
	name string
}

// duplicated is the set of resources a request names more than once.
func duplicated(keys []resourceKey) map[resourceKey]bool {
	seen, dup := map[resourceKey]bool{}, map[resourceKey]bool{}
	for _, k := range keys {
		if seen[k] {
			dup[k] = true
		}
		seen[k] = true
	}
	return dup
}

// alterConfigs answers AlterConfigs (key 33) v0-v2: each topic's
// overrides become exactly the request's (a key not named goes back to
// its default; a key without a value counts as not named), checked as a
// whole; validate_only checks without changing.
func (s *Server) alterConfigs(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	var keys []resourceKey
	for _, res := range req.Resources {
		keys = append(keys, resourceKey{res.ResourceType, res.ResourceName})
	}
	dup := duplicated(keys)
	for _, res := range req.Resources {
		ch := configChange{set: map[string]string{}, replace: true}
		ch.code, ch.msg = duplicateKey(res.Configs, func(c kmsg.AlterConfigsRequestResourceConfig) string { return c.Name })
		for _, c := range res.Configs {
			if c.Value != nil {
				ch.set[c.Name] = *c.Value
			}
		}
		code, msg := s.alterResource(x, res.ResourceType, res.ResourceName, dup[resourceKey{res.ResourceType, res.ResourceName}], ch, req.ValidateOnly)
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode = res.ResourceType, res.ResourceName, x.code(code)
		if code != 0 {
			rr.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// duplicateKey is the refusal of a resource that names a key more than
// once, INVALID_REQUEST as Kafka answers it; 0 when none is.
func duplicateKey[T any](configs []T, name func(T) string) (int16, string) {
	seen := map[string]bool{}
	for _, c := range configs {
		n := name(c)
		if seen[n] {
			return kerr.InvalidRequest.Code, fmt.Sprintf("config %q is named more than once for one resource", n)
		}
		seen[n] = true
	}
	return 0, ""
}

// incrementalAlterConfigs answers IncrementalAlterConfigs (key 44) v0-v1:
// SET and DELETE key by key, checked as a whole per resource; APPEND and
// SUBTRACT are for list-valued keys, of which PyStream has none
// (INVALID_CONFIG naming the key).
func (s *Server) incrementalAlterConfigs(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	var keys []resourceKey
	for _, res := range req.Resources {
		keys = append(keys, resourceKey{res.ResourceType, res.ResourceName})
	}
	dup := duplicated(keys)
	for _, res := range req.Resources {
		ch := configChange{set: map[string]string{}}
		ch.code, ch.msg = duplicateKey(res.Configs, func(c kmsg.IncrementalAlterConfigsRequestResourceConfig) string { return c.Name })
		for _, c := range res.Configs {
			if ch.code != 0 {
				break
			}
			switch c.Op {
			case kmsg.IncrementalAlterConfigOpSet:
				if c.Value == nil {
					ch.code, ch.msg = kerr.InvalidConfig.Code, fmt.Sprintf("config %q: SET needs a value", c.Name)
					break
				}
				ch.set[c.Name] = *c.Value
			case kmsg.IncrementalAlterConfigOpDelete:
				ch.remove = append(ch.remove, c.Name)
			case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
				ch.code, ch.msg = kerr.InvalidConfig.Code, fmt.Sprintf("config %q: %s is for list-valued keys, and PyStream's keys (%v) each hold one value (cleanup.policy's only policy is delete): use SET or DELETE", c.Name, c.Op, topic.ConfigKeys())
			default:
				ch.code, ch.msg = kerr.InvalidRequest.Code, fmt.Sprintf("config %q: unknown operation %d", c.Name, int8(c.Op))
			}
		}
		code, msg := s.alterResource(x, res.ResourceType, res.ResourceName, dup[resourceKey{res.ResourceType, res.ResourceName}], ch, req.ValidateOnly)
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode = res.ResourceType, res.ResourceName, x.code(code)
		if code != 0 {
			rr.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// alterResource applies ch to one resource of an alter request (only
// checks it when validateOnly) and returns its error code and message. A
// resource named twice in the request is refused, each time, as Kafka
// refuses it.
func (s *Server) alterResource(x *exchange, typ kmsg.ConfigResourceType, name string, named2 bool, ch configChange, validateOnly bool) (int16, string) {
	switch {
	case typ != kmsg.ConfigResourceTypeTopic && typ != kmsg.ConfigResourceTypeBroker:
		return kerr.InvalidRequest.Code, unknownResourceType(typ)
	case named2:
		return kerr.InvalidRequest.Code, "each resource may appear at most once in a request"
	case ch.code != 0:
		return ch.code, ch.msg
	case typ == kmsg.ConfigResourceTypeBroker:
		if code, msg := checkBrokerName(x.broker, name); code != 0 {
			return code, msg
		}
		return kerr.InvalidRequest.Code, "PyStream's broker configs are set when the server starts (its environment variables) and cannot be changed at run time"
	}
	if err := topic.ValidateName(name); err != nil {
		return kerr.InvalidTopicException.Code, err.Error()
	}
	if ch.replace || validateOnly {
		current, err := s.c.TopicConfigOverrides(name)
		if err != nil {
			return s.configCode(x, err, name)
		}
		if ch.replace {
			for _, key := range slices.Sorted(maps.Keys(current)) {
				if _, ok := ch.set[key]; !ok {
					ch.remove = append(ch.remove, key)
				}
			}
		}
		if validateOnly {
			_, err = topic.AlterConfigOverrides(current, ch.set, ch.remove)
			return s.configCode(x, err, name)
		}
	}
	if _, err := s.c.AlterTopicConfig(name, ch.set, ch.remove); err != nil {
		return s.configCode(x, err, name)
	}
	s.cfg.Logger.Info("kafka topic config altered", "topic", name, "set", ch.set, "removed", ch.remove)
	return 0, ""
}

// configCode maps an error of the topic configuration calls to the code
// and message of the resource: a refused key or value INVALID_CONFIG
// naming it, an unknown topic UNKNOWN_TOPIC_OR_PARTITION, a cluster that
// cannot take the change now NOT_CONTROLLER (the code an admin client
// retries); anything else is logged.
func (s *Server) configCode(x *exchange, err error, name string) (int16, string) {
	var ce *topic.ConfigError
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &ce):
		if ce.Value == "" {
			return kerr.InvalidConfig.Code, fmt.Sprintf("config %q: %s", ce.Key, ce.Reason)
		}
		return kerr.InvalidConfig.Code, fmt.Sprintf("config %q = %q: %s", ce.Key, ce.Value, ce.Reason)
	case errors.Is(err, cluster.ErrUnknownTopic), errors.Is(err, topic.ErrInvalidName):
		return kerr.UnknownTopicOrPartition.Code, fmt.Sprintf("no topic %q", name)
	case errors.Is(err, backend.ErrOutcomeUnknown):
		return kerr.RequestTimedOut.Code, "the change's outcome is unknown: describe the topic's configuration to see whether it was made"
	case unavailableNow(err):
		return kerr.NotController.Code, "the cluster cannot take the change now: try again"
	}
	x.fault("topic", name, "err", err)
	return kerr.UnknownServerError.Code, "the topic's configuration could not be read or changed; the server's log says why"
}

// resourceDenied is the deny code of a resource: an API's topic denial
// is CLUSTER_AUTHORIZATION_FAILED for a resource other than a topic, as
// Kafka checks the cluster's rights for a broker's configuration.
func resourceDenied(typ kmsg.ConfigResourceType, code int16) int16 {
	if code == kerr.TopicAuthorizationFailed.Code && typ != kmsg.ConfigResourceTypeTopic {
		return kerr.ClusterAuthorizationFailed.Code
	}
	return code
}

func failDescribeConfigs(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode = res.ResourceType, res.ResourceName, resourceDenied(res.ResourceType, code)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

func failAlterConfigs(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode = res.ResourceType, res.ResourceName, resourceDenied(res.ResourceType, code)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

func failIncrementalAlterConfigs(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode = res.ResourceType, res.ResourceName, resourceDenied(res.ResourceType, code)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}
