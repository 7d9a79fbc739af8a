package kafka_test

import (
	"strconv"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// overrides is topic name's overrides as the cluster keeps them.
func (f *fixture) overrides(t *testing.T, name string) map[string]string {
	t.Helper()
	o, err := f.c.TopicConfigOverrides(name)
	require.NoError(t, err)
	return o
}

// configsByKey indexes a described resource's configs by key.
func configsByKey(rc kadm.ResourceConfig) map[string]kadm.Config {
	out := map[string]kadm.Config{}
	for _, c := range rc.Configs {
		out[c.Key] = c
	}
	return out
}

// set and del are kadm's incremental operations on one key.
func set(key, value string) kadm.AlterConfig {
	return kadm.AlterConfig{Op: kadm.SetConfig, Name: key, Value: kmsg.StringPtr(value)}
}

func del(key string) kadm.AlterConfig { return kadm.AlterConfig{Op: kadm.DeleteConfig, Name: key} }

// TestKafkaConfigsDescribeTopic: kadm describes every topic key PyStream
// has, an override as DYNAMIC_TOPIC_CONFIG with the server-wide default
// as its synonym, every other key as DEFAULT_CONFIG; an unknown topic is
// UNKNOWN_TOPIC_OR_PARTITION with a message.
func TestKafkaConfigsDescribeTopic(t *testing.T) {
	f := start(t, 3, 1, 1)
	_, err := f.c.AlterTopicConfig("events", map[string]string{"retention.ms": "60000"}, nil)
	require.NoError(t, err)
	adm := f.admin(t)

	rcs, err := adm.DescribeTopicConfigs(ctx(t), "events", "nope")
	require.NoError(t, err)
	ev, err := rcs.On("events", nil)
	require.NoError(t, err)
	require.NoError(t, ev.Err)
	got := configsByKey(ev)
	require.Len(t, got, len(topic.ConfigKeys()))
	def := topic.DefaultConfig().Strings()
	for _, key := range topic.ConfigKeys() {
		c, ok := got[key]
		require.True(t, ok, key)
		require.NotNil(t, c.Value)
		if key == "retention.ms" {
			require.Equal(t, "60000", *c.Value)
			require.Equal(t, kmsg.ConfigSourceDynamicTopicConfig, c.Source)
			require.Len(t, c.Synonyms, 2)
			require.Equal(t, kadm.ConfigSynonym{Key: "retention.ms", Value: kmsg.StringPtr("60000"), Source: kmsg.ConfigSourceDynamicTopicConfig}, c.Synonyms[0])
			require.Equal(t, kadm.ConfigSynonym{Key: "log.retention.ms", Value: kmsg.StringPtr(def[key]), Source: kmsg.ConfigSourceDefaultConfig}, c.Synonyms[1])
			continue
		}
		require.Equal(t, def[key], *c.Value, key)
		require.Equal(t, kmsg.ConfigSourceDefaultConfig, c.Source, key)
		require.Len(t, c.Synonyms, 1, key)
		require.Equal(t, kmsg.ConfigSourceDefaultConfig, c.Synonyms[0].Source)
	}
	nope, err := rcs.On("nope", nil)
	require.NoError(t, err)
	require.ErrorIs(t, nope.Err, kerr.UnknownTopicOrPartition)
	require.Contains(t, nope.ErrMessage, "nope")
}

// TestKafkaConfigsDescribeVersions: v0 says IsDefault, v3 the type and
// PyStream's documentation of each key asked for (an unknown name left
// out, as Kafka leaves it out), v1 no synonyms unless asked.
func TestKafkaConfigsDescribeVersions(t *testing.T) {
	f := start(t, 1, 1, 1)
	_, err := f.c.AlterTopicConfig("events", map[string]string{"segment.ms": "5000"}, nil)
	require.NoError(t, err)
	nc := f.dial(t, 1)
	describe := func(version int16, names []string, docs bool) kmsg.DescribeConfigsResponseResource {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version, req.IncludeDocumentation = version, docs
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName, res.ConfigNames = kmsg.ConfigResourceTypeTopic, "events", names
		req.Resources = append(req.Resources, res)
		resp := roundTrip(t, nc, req, version).(*kmsg.DescribeConfigsResponse)
		require.Len(t, resp.Resources, 1)
		require.Zero(t, resp.Resources[0].ErrorCode)
		return resp.Resources[0]
	}
	v0 := describe(0, nil, false)
	require.Len(t, v0.Configs, len(topic.ConfigKeys()))
	for _, c := range v0.Configs {
		require.Equal(t, c.Name != "segment.ms", c.IsDefault, c.Name)
		require.False(t, c.ReadOnly)
	}
	v1 := describe(1, []string{"segment.ms"}, false)
	require.Len(t, v1.Configs, 1)
	require.Equal(t, kmsg.ConfigSourceDynamicTopicConfig, v1.Configs[0].Source)
	require.Empty(t, v1.Configs[0].ConfigSynonyms, "synonyms only when asked")
	v3 := describe(3, []string{"retention.bytes", "compression.type", "segment.ms", "cleanup.policy", "min.insync.replicas",
		"max.message.bytes", "message.timestamp.type"}, true)
	require.Len(t, v3.Configs, 6, "compression.type is not PyStream's: left out")
	types := map[string]kmsg.ConfigType{}
	for _, c := range v3.Configs {
		types[c.Name] = c.ConfigType
		require.NotNil(t, c.Documentation)
		require.NotEmpty(t, *c.Documentation, c.Name)
	}
	require.Equal(t, map[string]kmsg.ConfigType{"retention.bytes": kmsg.ConfigTypeLong, "segment.ms": kmsg.ConfigTypeLong,
		"cleanup.policy": kmsg.ConfigTypeList, "min.insync.replicas": kmsg.ConfigTypeInt,
		"max.message.bytes": kmsg.ConfigTypeInt, "message.timestamp.type": kmsg.ConfigTypeString}, types, "Kafka's types")
	require.Equal(t, "delete", *v3.Configs[0].Value)
	require.Equal(t, "1048588", *v3.Configs[1].Value)
	require.Equal(t, "CreateTime", *v3.Configs[2].Value)
	require.Equal(t, "1", *v3.Configs[3].Value)
	require.Equal(t, "5000", *v3.Configs[5].Value)
	v4 := describe(4, nil, false)
	require.Len(t, v4.Configs, len(topic.ConfigKeys()))
	require.Nil(t, v4.Configs[0].Documentation, "documentation only when asked")
}

// TestKafkaConfigsDescribeBroker: a broker describes its id and the
// settings PyStream applies, read-only, from the values the server
// started with: STATIC_BROKER_CONFIG where it was given its own,
// DEFAULT_CONFIG otherwise; "" (every broker) leaves out broker.id; the
// topics' synonyms name the same defaults.
func TestKafkaConfigsDescribeBroker(t *testing.T) {
	f := startOver(t, func(c kafka.Cluster) kafka.Cluster { return longRetention{c} }, 2, 1, 1)
	adm := f.admin(t)
	rcs, err := adm.DescribeBrokerConfigs(ctx(t), 2)
	require.NoError(t, err)
	b2, err := rcs.On("2", nil)
	require.NoError(t, err)
	require.NoError(t, b2.Err)
	got := configsByKey(b2)
	want := map[string]string{
		"broker.id": "2", "socket.request.max.bytes": strconv.Itoa(kafka.DefaultMaxRequestBytes),
		"log.retention.ms": "1209600000", "log.retention.bytes": "-1", "log.segment.bytes": strconv.Itoa(topic.DefaultSegmentBytes), "log.roll.ms": strconv.Itoa(topic.DefaultSegmentMs),
		"min.insync.replicas": "1", "log.cleanup.policy": "delete",
		// message.max.bytes is the topics' max.message.bytes default, as in
		// Kafka.
		"message.max.bytes": "1048588", "log.message.timestamp.type": "CreateTime",
	}
	require.Len(t, got, len(want))
	for k, v := range want {
		require.Equal(t, v, *got[k].Value, k)
	}
	require.Equal(t, kmsg.ConfigSourceStaticBrokerConfig, got["broker.id"].Source)
	require.Equal(t, kmsg.ConfigSourceStaticBrokerConfig, got["log.retention.ms"].Source, "started with its own")
	require.Equal(t, kmsg.ConfigSourceDefaultConfig, got["log.segment.bytes"].Source)

	all, err := adm.DescribeBrokerConfigs(ctx(t))
	require.NoError(t, err)
	cl, err := all.On("", nil)
	require.NoError(t, err)
	require.NoError(t, cl.Err)
	require.Len(t, cl.Configs, len(want)-1)
	require.NotContains(t, configsByKey(cl), "broker.id")

	tc, err := adm.DescribeTopicConfigs(ctx(t), "events")
	require.NoError(t, err)
	ev := configsByKey(tc[0])
	require.Equal(t, "1209600000", *ev["retention.ms"].Value)
	require.Equal(t, kmsg.ConfigSourceStaticBrokerConfig, ev["retention.ms"].Source)

	// Raw: read-only at every version; another broker's id, or a name
	// that is no id, INVALID_REQUEST with a message.
	nc := f.dial(t, 1)
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	for _, name := range []string{"1", "2", "x", ""} {
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, name
		req.Resources = append(req.Resources, res)
	}
	resp := roundTrip(t, nc, req, 4).(*kmsg.DescribeConfigsResponse)
	require.Len(t, resp.Resources, 4)
	for _, r := range resp.Resources {
		switch r.ResourceName {
		case "1", "":
			require.Zero(t, r.ErrorCode, r.ResourceName)
			require.NotEmpty(t, r.Configs)
			for _, c := range r.Configs {
				require.True(t, c.ReadOnly, c.Name)
				require.NotEqual(t, kmsg.ConfigTypeUnknown, c.ConfigType)
			}
		default:
			require.Equal(t, kerr.InvalidRequest.Code, r.ErrorCode, r.ResourceName)
			require.NotEmpty(t, *r.ErrorMessage)
		}
	}
}

// longRetention is a cluster whose server-wide retention.ms is 14 days,
// as a server started with PYSTREAM_RETENTION_MS has it.
type longRetention struct{ kafka.Cluster }

func (l longRetention) TopicDefaults() topic.Config {
	c := topic.DefaultConfig()
	c.RetentionMs = 14 * 24 * 3600 * 1000
	return c
}

func (l longRetention) TopicConfig(name string) (topic.Config, error) {
	o, err := l.TopicConfigOverrides(name)
	if err != nil {
		return topic.Config{}, err
	}
	return l.TopicDefaults().With(o)
}

// TestKafkaConfigsAlterKadm: kadm's incremental SET and DELETE change the
// topic's overrides; AlterTopicConfigsState replaces them whole (a key
// not named goes back to its default); the Validate forms check and
// change nothing; a refused key changes nothing of its topic, and a
// broker's configuration is refused as set at server start.
func TestKafkaConfigsAlterKadm(t *testing.T) {
	f := start(t, 3, 1, 1)
	adm := f.admin(t)
	require.NoError(t, f.c.CreateTopic("orders", 1, 1))

	rs, err := adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.ms", "3600000"), set("segment.ms", "007")}, "events", "orders")
	require.NoError(t, err)
	require.Len(t, rs, 2)
	for _, r := range rs {
		require.NoError(t, r.Err, r.ErrMessage)
	}
	require.Equal(t, map[string]string{"retention.ms": "3600000", "segment.ms": "7"}, f.overrides(t, "events"))
	require.Equal(t, map[string]string{"retention.ms": "3600000", "segment.ms": "7"}, f.overrides(t, "orders"))
	eff, err := f.c.TopicConfig("events")
	require.NoError(t, err)
	require.Equal(t, int64(3600000), eff.RetentionMs)

	rs, err = adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{del("segment.ms"), del("retention.bytes")}, "events")
	require.NoError(t, err)
	require.NoError(t, rs[0].Err)
	require.Equal(t, map[string]string{"retention.ms": "3600000"}, f.overrides(t, "events"))

	rs, err = adm.ValidateAlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.bytes", "1000"), del("retention.ms")}, "events")
	require.NoError(t, err)
	require.NoError(t, rs[0].Err)
	require.Equal(t, map[string]string{"retention.ms": "3600000"}, f.overrides(t, "events"), "validate_only changes nothing")

	rs, err = adm.AlterTopicConfigsState(ctx(t), []kadm.AlterConfig{{Name: "segment.bytes", Value: kmsg.StringPtr("1048576")}}, "events")
	require.NoError(t, err)
	require.NoError(t, rs[0].Err)
	require.Equal(t, map[string]string{"segment.bytes": "1048576"}, f.overrides(t, "events"), "retention.ms back to its default")

	rs, err = adm.ValidateAlterTopicConfigsState(ctx(t), nil, "events")
	require.NoError(t, err)
	require.NoError(t, rs[0].Err)
	require.Equal(t, map[string]string{"segment.bytes": "1048576"}, f.overrides(t, "events"))
	rs, err = adm.AlterTopicConfigsState(ctx(t), nil, "orders")
	require.NoError(t, err)
	require.NoError(t, rs[0].Err)
	require.Empty(t, f.overrides(t, "orders"), "an empty state: every key its default")

	refusals := []struct {
		name    string
		alter   func() (kadm.AlterConfigsResponses, error)
		want    *kerr.Error
		mention string
	}{
		{"compact", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.ms", "1"), set("cleanup.policy", "compact")}, "events")
		}, kerr.InvalidConfig, `"cleanup.policy" = "compact": log compaction does not exist in PyStream yet`},
		{"compact,delete", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("cleanup.policy", "compact,delete")}, "events")
		}, kerr.InvalidConfig, "compaction does not exist"},
		{"unknown policy", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("cleanup.policy", "shred")}, "events")
		}, kerr.InvalidConfig, "not a cleanup policy"},
		{"min.insync.replicas 0", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("min.insync.replicas", "0")}, "events")
		}, kerr.InvalidConfig, "min.insync.replicas"},
		{"unknown key", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.ms", "1"), set("unclean.leader.election.enable", "true")}, "events")
		}, kerr.InvalidConfig, "unclean.leader.election.enable"},
		{"bad value", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.ms", "1"), set("segment.bytes", "12")}, "events")
		}, kerr.InvalidConfig, "segment.bytes"},
		{"validate bad value", func() (kadm.AlterConfigsResponses, error) {
			return adm.ValidateAlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.ms", "soon")}, "events")
		}, kerr.InvalidConfig, "retention.ms"},
		{"delete unknown key", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{del("retention.ms"), del("compression.type")}, "events")
		}, kerr.InvalidConfig, "compression.type"},
		{"append", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "retention.ms", Value: kmsg.StringPtr("1")}}, "events")
		}, kerr.InvalidConfig, "retention.ms"},
		{"subtract", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{{Op: kadm.SubtractConfig, Name: "segment.ms", Value: kmsg.StringPtr("1")}}, "events")
		}, kerr.InvalidConfig, "segment.ms"},
		{"state unknown key", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigsState(ctx(t), []kadm.AlterConfig{{Name: "compression.type", Value: kmsg.StringPtr("zstd")}}, "events")
		}, kerr.InvalidConfig, "compression.type"},
		{"state bad value", func() (kadm.AlterConfigsResponses, error) {
			return adm.ValidateAlterTopicConfigsState(ctx(t), []kadm.AlterConfig{{Name: "retention.bytes", Value: kmsg.StringPtr("-2")}}, "events")
		}, kerr.InvalidConfig, "retention.bytes"},
		{"unknown topic", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.ms", "1")}, "nope")
		}, kerr.UnknownTopicOrPartition, "nope"},
		{"unknown topic state", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterTopicConfigsState(ctx(t), nil, "nope")
		}, kerr.UnknownTopicOrPartition, "nope"},
		{"broker", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterBrokerConfigs(ctx(t), []kadm.AlterConfig{set("message.max.bytes", "100")}, 2)
		}, kerr.InvalidRequest, "server starts"},
		{"broker state", func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterBrokerConfigsState(ctx(t), []kadm.AlterConfig{{Name: "log.retention.ms", Value: kmsg.StringPtr("100")}})
		}, kerr.InvalidRequest, "server starts"},
	}
	for _, r := range refusals {
		rs, err := r.alter()
		require.NoError(t, err, r.name)
		require.Len(t, rs, 1, r.name)
		require.ErrorIs(t, rs[0].Err, r.want, "%s: %s", r.name, rs[0].ErrMessage)
		require.Contains(t, rs[0].ErrMessage, r.mention, r.name)
		require.Equal(t, map[string]string{"segment.bytes": "1048576"}, f.overrides(t, "events"), "%s changes nothing", r.name)
	}
}

// TestKafkaConfigsRefusalsRaw pins every refusal of the three APIs that
// a client library does not send on its own: a key or resource named
// twice, a resource type without configurations, SET without a value, an
// unknown operation, a malformed topic name, broker resources of another
// broker; each with a message, none changing anything.
func TestKafkaConfigsRefusalsRaw(t *testing.T) {
	f := start(t, 2, 1, 1)
	_, err := f.c.AlterTopicConfig("events", map[string]string{"retention.ms": "60000"}, nil)
	require.NoError(t, err)
	nc := f.dial(t, 1)
	before := f.overrides(t, "events")
	v := kmsg.StringPtr

	type res struct {
		typ     kmsg.ConfigResourceType
		name    string
		configs []kmsg.IncrementalAlterConfigsRequestResourceConfig
	}
	setc := func(k string, val *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: k, Op: kmsg.IncrementalAlterConfigOpSet, Value: val}
	}
	incremental := func(validate bool, rs ...res) []kmsg.IncrementalAlterConfigsResponseResource {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version, req.ValidateOnly = 1, validate
		for _, r := range rs {
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName, rr.Configs = r.typ, r.name, r.configs
			req.Resources = append(req.Resources, rr)
		}
		return roundTrip(t, nc, req, 1).(*kmsg.IncrementalAlterConfigsResponse).Resources
	}
	whole := func(rs ...res) []kmsg.AlterConfigsResponseResource {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.Version = 2
		for _, r := range rs {
			rr := kmsg.NewAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = r.typ, r.name
			for _, c := range r.configs {
				rr.Configs = append(rr.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: c.Name, Value: c.Value})
			}
			req.Resources = append(req.Resources, rr)
		}
		return roundTrip(t, nc, req, 2).(*kmsg.AlterConfigsResponse).Resources
	}
	topicRes := func(cs ...kmsg.IncrementalAlterConfigsRequestResourceConfig) res {
		return res{kmsg.ConfigResourceTypeTopic, "events", cs}
	}
	check := func(name string, code, wantCode int16, msg *string) {
		t.Helper()
		require.Equal(t, wantCode, code, "%s: %v", name, kerr.ErrorForCode(code))
		require.NotNil(t, msg, name)
		require.NotEmpty(t, *msg, name)
		require.Equal(t, before, f.overrides(t, "events"), "%s changes nothing", name)
	}
	invalidRequest, invalidConfig := kerr.InvalidRequest.Code, kerr.InvalidConfig.Code

	dupKey := topicRes(setc("retention.ms", v("1")), setc("retention.ms", v("2")))
	r := incremental(false, dupKey)
	check("incremental key twice", r[0].ErrorCode, invalidRequest, r[0].ErrorMessage)
	w := whole(dupKey)
	check("alter key twice", w[0].ErrorCode, invalidRequest, w[0].ErrorMessage)

	one := topicRes(setc("retention.ms", v("1")))
	r = incremental(false, one, one)
	require.Len(t, r, 2)
	for _, x := range r {
		check("incremental resource twice", x.ErrorCode, invalidRequest, x.ErrorMessage)
	}
	w = whole(one, one)
	require.Len(t, w, 2)
	for _, x := range w {
		check("alter resource twice", x.ErrorCode, invalidRequest, x.ErrorMessage)
	}

	r = incremental(false, topicRes(setc("retention.ms", nil)))
	check("SET without a value", r[0].ErrorCode, invalidConfig, r[0].ErrorMessage)
	require.Contains(t, *r[0].ErrorMessage, "retention.ms")
	r = incremental(false, topicRes(kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "retention.ms", Op: 9, Value: v("1")}))
	check("unknown operation", r[0].ErrorCode, invalidRequest, r[0].ErrorMessage)

	for _, typ := range []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeGroupConfig, 0} {
		r = incremental(false, res{typ, "events", nil})
		check("incremental resource type", r[0].ErrorCode, invalidRequest, r[0].ErrorMessage)
		w = whole(res{typ, "events", nil})
		check("alter resource type", w[0].ErrorCode, invalidRequest, w[0].ErrorMessage)
		d := kmsg.NewPtrDescribeConfigsRequest()
		d.Version = 4
		d.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: typ, ResourceName: "events"}}
		dr := roundTrip(t, nc, d, 4).(*kmsg.DescribeConfigsResponse).Resources
		check("describe resource type", dr[0].ErrorCode, invalidRequest, dr[0].ErrorMessage)
	}

	r = incremental(false, res{kmsg.ConfigResourceTypeTopic, "bad name", []kmsg.IncrementalAlterConfigsRequestResourceConfig{setc("retention.ms", v("1"))}})
	check("malformed topic name", r[0].ErrorCode, kerr.InvalidTopicException.Code, r[0].ErrorMessage)

	for _, name := range []string{"", "1", "2", "one"} {
		b := res{kmsg.ConfigResourceTypeBroker, name, []kmsg.IncrementalAlterConfigsRequestResourceConfig{setc("message.max.bytes", v("100"))}}
		r = incremental(true, b)
		check("incremental broker "+name, r[0].ErrorCode, invalidRequest, r[0].ErrorMessage)
		w = whole(b)
		check("alter broker "+name, w[0].ErrorCode, invalidRequest, w[0].ErrorMessage)
	}

	// A refused resource leaves the others of its request served.
	ok := res{kmsg.ConfigResourceTypeTopic, "events", []kmsg.IncrementalAlterConfigsRequestResourceConfig{setc("segment.ms", v("9000"))}}
	r = incremental(false, ok, res{kmsg.ConfigResourceTypeBroker, "1", nil})
	require.Zero(t, r[0].ErrorCode)
	require.Equal(t, kerr.InvalidRequest.Code, r[1].ErrorCode)
	require.Equal(t, map[string]string{"retention.ms": "60000", "segment.ms": "9000"}, f.overrides(t, "events"))
}

// TestKafkaConfigsSarama: sarama's ClusterAdmin lists topics with their
// non-default configs (it describes every topic's configuration), and
// describes (with synonyms, types and documentation), alters and
// incrementally alters them.
func TestKafkaConfigsSarama(t *testing.T) {
	f := start(t, 3, 2, 1)
	_, err := f.c.AlterTopicConfig("events", map[string]string{"retention.ms": "60000"}, nil)
	require.NoError(t, err)
	ca, err := sarama.NewClusterAdminFromClient(f.saramaClient(t))
	require.NoError(t, err)

	topics, err := ca.ListTopics()
	require.NoError(t, err)
	ev, ok := topics["events"]
	require.True(t, ok)
	require.Equal(t, int32(2), ev.NumPartitions)
	require.Equal(t, map[string]*string{"retention.ms": kmsg.StringPtr("60000")}, ev.ConfigEntries, "only the override is not a default")

	results, err := ca.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: "events"}, {Type: sarama.TopicResource, Name: "nope"}},
		sarama.DescribeConfigsOptions{IncludeSynonyms: true, IncludeDocumentation: true})
	require.NoError(t, err)
	require.Len(t, results, 2)
	for _, r := range results {
		if r.Name == "nope" {
			require.Equal(t, sarama.ErrUnknownTopicOrPartition, r.ErrorCode)
			require.NotEmpty(t, r.ErrorMsg)
			continue
		}
		require.Equal(t, sarama.ErrNoError, r.ErrorCode)
		require.Len(t, r.Configs, len(topic.ConfigKeys()))
		for _, e := range r.Configs {
			require.Equal(t, e.Name != "retention.ms", e.Default, e.Name)
			want := sarama.LongConfigType
			switch e.Name {
			case "min.insync.replicas":
				want = sarama.IntConfigType
			case "cleanup.policy":
				want = sarama.ListConfigType
			case "max.message.bytes":
				want = sarama.IntConfigType
			case "message.timestamp.type":
				want = sarama.StringConfigType
			}
			require.Equal(t, want, e.Type, e.Name)
			require.NotNil(t, e.Documentation, e.Name)
			require.NotEmpty(t, e.Synonyms, e.Name)
		}
	}

	brokers, err := ca.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.BrokerResource, Name: "3"}}, sarama.DescribeConfigsOptions{})
	require.NoError(t, err)
	require.Len(t, brokers, 1)
	require.Equal(t, sarama.ErrNoError, brokers[0].ErrorCode)
	found := false
	for _, e := range brokers[0].Configs {
		require.True(t, e.ReadOnly, e.Name)
		if e.Name == "broker.id" {
			found = true
			require.Equal(t, "3", e.Value)
		}
	}
	require.True(t, found, "broker.id described")

	require.NoError(t, ca.AlterConfig(sarama.TopicResource, "events", map[string]*string{"segment.ms": kmsg.StringPtr("5000")}, true))
	require.Equal(t, map[string]string{"retention.ms": "60000"}, f.overrides(t, "events"), "validate only")
	require.NoError(t, ca.AlterConfig(sarama.TopicResource, "events", map[string]*string{"segment.ms": kmsg.StringPtr("5000")}, false))
	require.Equal(t, map[string]string{"segment.ms": "5000"}, f.overrides(t, "events"), "AlterConfigs replaces the whole set")
	err = ca.AlterConfig(sarama.TopicResource, "events", map[string]*string{"segment.ms": kmsg.StringPtr("0")}, false)
	require.ErrorIs(t, err, sarama.ErrInvalidConfig)
	require.Equal(t, map[string]string{"segment.ms": "5000"}, f.overrides(t, "events"))
	err = ca.AlterConfig(sarama.BrokerResource, "1", map[string]*string{"message.max.bytes": kmsg.StringPtr("10")}, false)
	require.ErrorIs(t, err, sarama.ErrInvalidRequest)

	require.NoError(t, ca.IncrementalAlterConfig(sarama.TopicResource, "events", map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.bytes": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: kmsg.StringPtr("1048576")},
		"segment.ms":      {Operation: sarama.IncrementalAlterConfigsOperationDelete},
	}, false))
	require.Equal(t, map[string]string{"retention.bytes": "1048576"}, f.overrides(t, "events"))
	err = ca.IncrementalAlterConfig(sarama.TopicResource, "events", map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.bytes": {Operation: sarama.IncrementalAlterConfigsOperationAppend, Value: kmsg.StringPtr("1")},
	}, false)
	require.ErrorIs(t, err, sarama.ErrInvalidConfig)
	require.Equal(t, map[string]string{"retention.bytes": "1048576"}, f.overrides(t, "events"))
}

// TestKafkaConfigsAuthz: describing needs the read role, altering the
// admin role; a principal limited to prefixes is refused topic by topic
// (TOPIC_AUTHORIZATION_FAILED) while the rest of its request is served,
// describes brokers, and may not alter one (CLUSTER_AUTHORIZATION_FAILED);
// a role too small refuses a broker resource with
// CLUSTER_AUTHORIZATION_FAILED.
func TestKafkaConfigsAuthz(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	require.NoError(t, s.c.CreateTopic("payments", 1, 1))
	f := s.fixture

	reader := kadm.NewClient(s.as(t, auth.MechanismPlain, "reader"))
	rcs, err := reader.DescribeTopicConfigs(ctx(t), "events", "payments")
	require.NoError(t, err)
	for _, rc := range rcs {
		require.NoError(t, rc.Err, rc.Name)
		require.Len(t, rc.Configs, len(topic.ConfigKeys()))
	}
	ars, err := reader.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.ms", "1")}, "events")
	require.NoError(t, err)
	require.ErrorIs(t, ars[0].Err, kerr.TopicAuthorizationFailed)
	require.Empty(t, f.overrides(t, "events"))

	raw := func(who string) func(kmsg.Request, int16) kmsg.Response {
		nc := f.dial(t, 1)
		plainAuth(t, nc, who)
		return func(req kmsg.Request, v int16) kmsg.Response { return roundTrip(t, nc, req, v) }
	}
	incr := func(v int16, names ...string) *kmsg.IncrementalAlterConfigsRequest {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version = v
		for _, n := range names {
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, n
			if n == "1" {
				rr.ResourceType = kmsg.ConfigResourceTypeBroker
			}
			rr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr("120000")}}
			req.Resources = append(req.Resources, rr)
		}
		return req
	}
	codes := func(rs []kmsg.IncrementalAlterConfigsResponseResource) map[string]int16 {
		out := map[string]int16{}
		for _, r := range rs {
			out[r.ResourceName] = r.ErrorCode
		}
		return out
	}
	// The reader's role is too small to alter: a topic's refusal is
	// TOPIC_AUTHORIZATION_FAILED, a broker's CLUSTER_AUTHORIZATION_FAILED.
	rr := raw("reader")(incr(1, "events", "1"), 1).(*kmsg.IncrementalAlterConfigsResponse)
	require.Equal(t, map[string]int16{"events": kerr.TopicAuthorizationFailed.Code, "1": kerr.ClusterAuthorizationFailed.Code}, codes(rr.Resources))

	// payops administers "pay…" topics only.
	payops := raw("payops")
	pr := payops(incr(1, "payments", "events", "1"), 1).(*kmsg.IncrementalAlterConfigsResponse)
	require.Equal(t, map[string]int16{"payments": 0, "events": kerr.TopicAuthorizationFailed.Code, "1": kerr.ClusterAuthorizationFailed.Code}, codes(pr.Resources))
	for _, r := range pr.Resources {
		if r.ErrorCode != 0 {
			require.NotEmpty(t, *r.ErrorMessage, r.ResourceName)
		}
	}
	require.Equal(t, map[string]string{"retention.ms": "120000"}, f.overrides(t, "payments"))
	require.Empty(t, f.overrides(t, "events"))
	wr := kmsg.NewPtrAlterConfigsRequest()
	wr.Version = 1
	wr.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "events"}, {ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "payments"}}
	wresp := payops(wr, 1).(*kmsg.AlterConfigsResponse)
	require.Len(t, wresp.Resources, 2)
	for _, r := range wresp.Resources {
		want := int16(0)
		if r.ResourceName == "events" {
			want = kerr.TopicAuthorizationFailed.Code
		}
		require.Equal(t, want, r.ErrorCode, r.ResourceName)
	}
	require.Empty(t, f.overrides(t, "payments"), "AlterConfigs emptied payments' overrides")

	// payer (write, "pay…"): describes its topics and the brokers, not
	// another topic.
	d := kmsg.NewPtrDescribeConfigsRequest()
	d.Version = 2
	d.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "payments"},
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "events"}, {ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"}}
	dr := raw("payer")(d, 2).(*kmsg.DescribeConfigsResponse)
	require.Len(t, dr.Resources, 3)
	for _, r := range dr.Resources {
		if r.ResourceName == "events" {
			require.Equal(t, kerr.TopicAuthorizationFailed.Code, r.ErrorCode)
			require.Empty(t, r.Configs)
			continue
		}
		require.Zero(t, r.ErrorCode, r.ResourceName)
		require.NotEmpty(t, r.Configs, r.ResourceName)
	}

	ops := kadm.NewClient(s.as(t, auth.MechanismPlain, "ops"))
	rs, err := ops.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{set("retention.ms", "1")}, "events")
	require.NoError(t, err)
	require.NoError(t, rs[0].Err)
	require.Equal(t, map[string]string{"retention.ms": "1"}, f.overrides(t, "events"))
}
