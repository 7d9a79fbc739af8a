package kafka_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// The compatibility matrix's Python and kcat rows
// (docs/kafka-admin.md § Clients tested): kafka-python's
// KafkaAdminClient and confluent-kafka's AdminClient (librdkafka), each
// run once as one program that makes every call and prints what it read
// back as JSON, and kcat -L; each call is a subtest named after its
// client and call, so that go test -v reads as the table. The kgo/kadm
// and sarama rows are in each API's own test file.

// kafkaPython is a Python interpreter that imports kafka (kafka-python);
// the test is skipped when there is none.
func kafkaPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import kafka.admin").Run() == nil {
			return path
		}
	}
	t.Skip("python3 with kafka-python is not installed: skipping (install it: apt-get install python3-kafka)")
	return ""
}

// pyRow is one call's outcome as a matrix program prints it: what it
// read back (OK), the exception it raised, or Absent when the client's
// version has no such call.
type pyRow struct {
	OK     json.RawMessage `json:"ok"`
	Error  string          `json:"error"`
	Absent bool            `json:"absent"`
}

// runMatrix runs program with py against broker 1's listener, telling
// it (argv "1" or "0") whether to call create_partitions, and returns its
// rows by call and the client's version.
func (f *fixture) runMatrix(t *testing.T, py, program string, grow bool) (map[string]pyRow, string) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := "0"
	if grow {
		g = "1"
	}
	cmd := exec.CommandContext(c, py, "-c", program, f.srv.Addr(1), g)
	out, err := cmd.Output()
	var stderr []byte
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "%s%s", out, stderr)
	raw := map[string]json.RawMessage{}
	require.NoError(t, json.Unmarshal(out, &raw), "%s", out)
	var version string
	require.NoError(t, json.Unmarshal(raw["_version"], &version))
	delete(raw, "_version")
	rows := map[string]pyRow{}
	for k, v := range raw {
		var r pyRow
		require.NoError(t, json.Unmarshal(v, &r), "%s", v)
		rows[k] = r
	}
	return rows, version
}

// ok decodes what call read back into v; the call must have been made
// and have raised nothing.
func (r pyRow) ok(t *testing.T, v any) {
	t.Helper()
	require.False(t, r.Absent, "the call is absent from this client version")
	require.Empty(t, r.Error)
	require.NotNil(t, r.OK, "the call was not made")
	require.NoError(t, json.Unmarshal(r.OK, v), "%s", r.OK)
}

// servesCreatePartitions says whether the listener advertises
// CreatePartitions (key 37) in its ApiVersions.
func (f *fixture) servesCreatePartitions(t *testing.T) bool {
	t.Helper()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx(t), f.client(t))
	require.NoError(t, err)
	for _, k := range resp.ApiKeys {
		if k.ApiKey == int16(kmsg.CreatePartitions) {
			return true
		}
	}
	return false
}

// matrixFixture is the matrix's cluster: three brokers; per client a
// topic with a retention.ms override to describe and alter ("kp-conf",
// "cf-conf"), one to delete ("-doomed") and one to grow ("-grow"), and
// groups with committed offsets, one of them to delete ("-gone").
func matrixFixture(t *testing.T) *fixture {
	f := start(t, 3, 3, 3)
	for _, p := range []string{"kp", "cf"} {
		for _, name := range []string{p + "-conf", p + "-doomed", p + "-grow"} {
			require.NoError(t, f.c.CreateTopic(name, 2, 1))
		}
		_, err := f.c.AlterTopicConfig(p+"-conf", map[string]string{"retention.ms": "60000"}, nil)
		require.NoError(t, err)
	}
	f.srv.Reconcile()
	adm := f.admin(t)
	for _, g := range []string{"kp-keep", "kp-gone", "cf-keep", "cf-gone"} {
		commitSimple(t, adm, g, 0, 0, 1)
	}
	return f
}

// topicDefaults is every topic key's server-wide default, with edits.
func topicDefaults(edits map[string]string) map[string]string {
	out := topic.DefaultConfig().Strings()
	for k, v := range edits {
		out[k] = v
	}
	return out
}

// brokerWant is what broker id describes on a matrix fixture.
func brokerWant(id int) map[string]string {
	d := topic.DefaultConfig().Strings()
	return map[string]string{
		"broker.id": strconv.Itoa(id), "message.max.bytes": d["max.message.bytes"],
		"socket.request.max.bytes": strconv.Itoa(kafka.DefaultMaxRequestBytes),
		"log.retention.ms":         d["retention.ms"], "log.retention.bytes": d["retention.bytes"],
		"log.segment.bytes": d["segment.bytes"], "log.roll.ms": d["segment.ms"],
		"min.insync.replicas": d["min.insync.replicas"], "log.cleanup.policy": d["cleanup.policy"],
		"log.message.timestamp.type": d["message.timestamp.type"],
	}
}

// counted counts each name's listings.
func counted(names []string) map[string]int {
	out := map[string]int{}
	for _, n := range names {
		out[n]++
	}
	return out
}

// topicNames is the cluster's topics by name.
func (f *fixture) topicNames() []string {
	var out []string
	for _, ti := range f.c.Topics() {
		out = append(out, ti.Name)
	}
	return out
}

// partitionCount is topic name's partition count as the cluster keeps it.
func (f *fixture) partitionCount(t *testing.T, name string) int {
	t.Helper()
	ti, err := f.c.Topic(name)
	require.NoError(t, err)
	return ti.PartitionCount
}

// kafkaPythonMatrix makes each kafka-python KafkaAdminClient call the
// matrix tests (argv: bootstrap server, "1" to call create_partitions).
const kafkaPythonMatrix = `import json, sys
import kafka
from kafka.admin import KafkaAdminClient, ConfigResource, ConfigResourceType, NewPartitions
rows = {"_version": kafka.__version__}
def row(name, fn):
    try:
        rows[name] = {"ok": fn()}
    except Exception as e:
        rows[name] = {"error": "%s: %s" % (type(e).__name__, e)}
adm = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="matrix-kafka-python", request_timeout_ms=10000)
def described(resources):
    out = {}
    for resp in adm.describe_configs(resources):
        for r in resp.resources:
            out[r[3]] = {"code": r[0], "message": r[1] or "", "configs": {c[0]: c[1] for c in r[4]}}
    return out
def topic(name, keys=None):
    return ConfigResource(ConfigResourceType.TOPIC, name, configs=dict.fromkeys(keys) if keys else None)
row("describe_configs_topic", lambda: described([topic("kp-conf")]))
row("describe_configs_broker", lambda: described([ConfigResource(ConfigResourceType.BROKER, "2")]))
def alter():
    resp = adm.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-conf", configs={"segment.ms": "5000"})])
    return {"codes": {r[3]: r[0] for r in resp.resources}, "after": described([topic("kp-conf", ["segment.ms", "retention.ms"])])["kp-conf"]}
row("alter_configs", alter)
def delete_topics():
    resp = adm.delete_topics(["kp-doomed"], timeout_ms=10000)
    return {"codes": {t: c for t, c in resp.topic_error_codes}, "after": sorted(adm.list_topics())}
row("delete_topics", delete_topics)
def listed():
    # Each broker asked on its own: the client merges them into a set,
    # which would hide a group listed twice.
    return {str(b.nodeId): sorted(g for g, _ in adm.list_consumer_groups(broker_ids=[b.nodeId])) for b in adm._client.cluster.brokers()}
row("list_consumer_groups", listed)
def delete_groups():
    res = adm.delete_consumer_groups(["kp-gone"])
    return {"results": {g: e.__name__ for g, e in res}, "after": sorted(g for g, _ in adm.list_consumer_groups())}
row("delete_consumer_groups", delete_groups)
def cluster():
    c = adm.describe_cluster()
    return {"brokers": sorted(b["node_id"] for b in c["brokers"]), "controller_id": c["controller_id"], "cluster_id": c["cluster_id"]}
row("describe_cluster", cluster)
if sys.argv[2] == "1":
    def grow():
        resp = adm.create_partitions({"kp-grow": NewPartitions(total_count=4)})
        parts = [len(t["partitions"]) for t in adm.describe_topics(["kp-grow"])]
        return {"errors": {t[0]: [t[1], t[2] or ""] for t in resp.topic_errors}, "partitions": parts}
    row("create_partitions", grow)
adm.close()
print(json.dumps(rows))
`

// confluentMatrix makes each confluent-kafka AdminClient call the matrix
// tests, marking those its version lacks absent (argv: bootstrap server,
// "1" to call create_partitions).
const confluentMatrix = `import json, sys
import confluent_kafka
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions
rows = {"_version": "%s (librdkafka %s)" % (confluent_kafka.version()[0], confluent_kafka.libversion()[0])}
def row(name, fn, needs=None):
    if needs is not None and not hasattr(AdminClient, needs):
        rows[name] = {"absent": True}
        return
    try:
        rows[name] = {"ok": fn()}
    except Exception as e:
        rows[name] = {"error": "%s: %s" % (type(e).__name__, e)}
T = 10
adm = AdminClient({"bootstrap.servers": sys.argv[1], "client.id": "matrix-confluent-kafka"})
def described(resources):
    out = {}
    for res, f in adm.describe_configs(resources, request_timeout=T).items():
        out[res.name] = {k: e.value for k, e in f.result().items()}
    return out
row("describe_configs_topic", lambda: described([ConfigResource("TOPIC", "cf-conf")]))
row("describe_configs_broker", lambda: described([ConfigResource("BROKER", "3")]))
def alter():
    for f in adm.alter_configs([ConfigResource("TOPIC", "cf-conf", set_config={"segment.ms": "5000"})], request_timeout=T).values():
        f.result()
    return described([ConfigResource("TOPIC", "cf-conf")])["cf-conf"]
row("alter_configs", alter)
def incremental():
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry
    res = ConfigResource("TOPIC", "cf-conf", incremental_configs=[
        ConfigEntry("retention.bytes", "1048576", incremental_operation=AlterConfigOpType.SET)])
    for f in adm.incremental_alter_configs([res], request_timeout=T).values():
        f.result()
    return described([ConfigResource("TOPIC", "cf-conf")])["cf-conf"]
row("incremental_alter_configs", incremental, "incremental_alter_configs")
# list_groups asks every broker and appends what each answers.
row("list_groups", lambda: sorted(g.id for g in adm.list_groups(timeout=T)), "list_groups")
def delete_groups():
    for f in adm.delete_consumer_groups(["cf-gone"], request_timeout=T).values():
        f.result()
    return sorted(g.id for g in adm.list_groups(timeout=T))
row("delete_consumer_groups", delete_groups, "delete_consumer_groups")
def cluster():
    c = adm.describe_cluster(request_timeout=T).result()
    return {"brokers": sorted(n.id for n in c.nodes), "controller_id": c.controller.id, "cluster_id": c.cluster_id}
row("describe_cluster", cluster, "describe_cluster")
def metadata():
    md = adm.list_topics(timeout=T)
    return {"brokers": sorted(md.brokers), "controller_id": md.controller_id, "cluster_id": md.cluster_id,
            "topics": {t: len(m.partitions) for t, m in md.topics.items()}}
row("list_topics", metadata)
def delete_topics():
    for f in adm.delete_topics(["cf-doomed"], operation_timeout=T, request_timeout=T).values():
        f.result()
    return sorted(adm.list_topics(timeout=T).topics)
row("delete_topics", delete_topics)
if sys.argv[2] == "1":
    def grow():
        for f in adm.create_partitions([NewPartitions("cf-grow", 4)], operation_timeout=T, request_timeout=T).values():
            f.result()
        return len(adm.list_topics(topic="cf-grow", timeout=T).topics["cf-grow"].partitions)
    row("create_partitions", grow)
print(json.dumps(rows))
`

// TestKafkaAdminMatrixPython: kafka-python's and confluent-kafka's admin
// clients, and kcat -L, against one three-broker listener; each call's
// result is read back (a config's value, a topic gone from the list, each
// group listed once), not only free of errors. create_partitions skips
// while the listener does not serve CreatePartitions.
func TestKafkaAdminMatrixPython(t *testing.T) {
	f := matrixFixture(t)
	grow := f.servesCreatePartitions(t)
	skipGrow := func(t *testing.T) {
		if !grow {
			t.Skip("CreatePartitions not served yet")
		}
	}

	t.Run("kafka-python", func(t *testing.T) {
		rows, version := f.runMatrix(t, kafkaPython(t), kafkaPythonMatrix, grow)
		t.Logf("kafka-python %s", version)
		type described map[string]struct {
			Code    int16             `json:"code"`
			Message string            `json:"message"`
			Configs map[string]string `json:"configs"`
		}
		t.Run("describe_configs_topic", func(t *testing.T) {
			var got described
			rows["describe_configs_topic"].ok(t, &got)
			require.Zero(t, got["kp-conf"].Code, got["kp-conf"].Message)
			require.Equal(t, topicDefaults(map[string]string{"retention.ms": "60000"}), got["kp-conf"].Configs)
		})
		t.Run("describe_configs_broker", func(t *testing.T) {
			var got described
			rows["describe_configs_broker"].ok(t, &got)
			require.Zero(t, got["2"].Code, got["2"].Message)
			require.Equal(t, brokerWant(2), got["2"].Configs)
		})
		t.Run("alter_configs", func(t *testing.T) {
			var got struct {
				Codes map[string]int16 `json:"codes"`
				After struct {
					Configs map[string]string `json:"configs"`
				} `json:"after"`
			}
			rows["alter_configs"].ok(t, &got)
			require.Equal(t, map[string]int16{"kp-conf": 0}, got.Codes)
			def := topic.DefaultConfig().Strings()
			require.Equal(t, map[string]string{"segment.ms": "5000", "retention.ms": def["retention.ms"]}, got.After.Configs, "the whole set replaced")
			require.Equal(t, map[string]string{"segment.ms": "5000"}, f.overrides(t, "kp-conf"))
		})
		t.Run("delete_topics", func(t *testing.T) {
			var got struct {
				Codes map[string]int16 `json:"codes"`
				After []string         `json:"after"`
			}
			rows["delete_topics"].ok(t, &got)
			require.Equal(t, map[string]int16{"kp-doomed": 0}, got.Codes)
			require.NotContains(t, got.After, "kp-doomed")
			require.Contains(t, got.After, "kp-conf")
			require.NotContains(t, f.topicNames(), "kp-doomed")
		})
		t.Run("list_consumer_groups", func(t *testing.T) {
			var got map[string][]string
			rows["list_consumer_groups"].ok(t, &got)
			require.Len(t, got, 3, "every broker asked")
			var all []string
			for _, gs := range got {
				all = append(all, gs...)
			}
			require.Equal(t, map[string]int{"kp-keep": 1, "kp-gone": 1, "cf-keep": 1, "cf-gone": 1}, counted(all), "each group listed once, by one broker")
		})
		t.Run("delete_consumer_groups", func(t *testing.T) {
			var got struct {
				Results map[string]string `json:"results"`
				After   []string          `json:"after"`
			}
			rows["delete_consumer_groups"].ok(t, &got)
			require.Equal(t, map[string]string{"kp-gone": "NoError"}, got.Results)
			require.ElementsMatch(t, []string{"kp-keep", "cf-keep", "cf-gone"}, got.After)
		})
		t.Run("describe_cluster", func(t *testing.T) {
			var got struct {
				Brokers      []int  `json:"brokers"`
				ControllerID int    `json:"controller_id"`
				ClusterID    string `json:"cluster_id"`
			}
			rows["describe_cluster"].ok(t, &got)
			require.Equal(t, []int{1, 2, 3}, got.Brokers)
			require.Contains(t, got.Brokers, got.ControllerID)
			require.NotEmpty(t, got.ClusterID)
		})
		t.Run("create_partitions", func(t *testing.T) {
			skipGrow(t)
			var got struct {
				Errors     map[string][]any `json:"errors"`
				Partitions []int            `json:"partitions"`
			}
			rows["create_partitions"].ok(t, &got)
			require.Equal(t, map[string][]any{"kp-grow": {0.0, ""}}, got.Errors)
			require.Equal(t, []int{4}, got.Partitions)
			require.Equal(t, 4, f.partitionCount(t, "kp-grow"))
		})
	})

	t.Run("confluent-kafka", func(t *testing.T) {
		rows, version := f.runMatrix(t, confluentPython(t), confluentMatrix, grow)
		t.Logf("confluent-kafka %s", version)
		absent := func(t *testing.T, call string) {
			t.Helper()
			if rows[call].Absent {
				t.Skipf("confluent-kafka %s has no AdminClient.%s", version, call)
			}
		}
		t.Run("describe_configs_topic", func(t *testing.T) {
			var got map[string]map[string]string
			rows["describe_configs_topic"].ok(t, &got)
			require.Equal(t, topicDefaults(map[string]string{"retention.ms": "60000"}), got["cf-conf"])
		})
		t.Run("describe_configs_broker", func(t *testing.T) {
			var got map[string]map[string]string
			rows["describe_configs_broker"].ok(t, &got)
			require.Equal(t, brokerWant(3), got["3"])
		})
		t.Run("alter_configs", func(t *testing.T) {
			var got map[string]string
			rows["alter_configs"].ok(t, &got)
			require.Equal(t, topicDefaults(map[string]string{"segment.ms": "5000"}), got, "the whole set replaced")
		})
		t.Run("incremental_alter_configs", func(t *testing.T) {
			absent(t, "incremental_alter_configs")
			var got map[string]string
			rows["incremental_alter_configs"].ok(t, &got)
			require.Equal(t, topicDefaults(map[string]string{"segment.ms": "5000", "retention.bytes": "1048576"}), got)
		})
		t.Run("list_groups", func(t *testing.T) {
			absent(t, "list_groups")
			var got []string
			rows["list_groups"].ok(t, &got)
			// kp-gone is listed too unless kafka-python's row, before,
			// deleted it.
			n := counted(got)
			for g, c := range n {
				require.Equal(t, 1, c, "group %s listed once", g)
			}
			for _, g := range []string{"kp-keep", "cf-keep", "cf-gone"} {
				require.Contains(t, n, g)
			}
		})
		t.Run("delete_consumer_groups", func(t *testing.T) {
			absent(t, "delete_consumer_groups")
			var got []string
			rows["delete_consumer_groups"].ok(t, &got)
			require.Contains(t, got, "cf-keep")
			require.NotContains(t, got, "cf-gone")
		})
		t.Run("describe_cluster", func(t *testing.T) {
			absent(t, "describe_cluster")
			var got struct {
				Brokers      []int  `json:"brokers"`
				ControllerID int    `json:"controller_id"`
				ClusterID    string `json:"cluster_id"`
			}
			rows["describe_cluster"].ok(t, &got)
			require.Equal(t, []int{1, 2, 3}, got.Brokers)
			require.Contains(t, got.Brokers, got.ControllerID)
			require.NotEmpty(t, got.ClusterID)
		})
		t.Run("list_topics", func(t *testing.T) {
			var got struct {
				Brokers      []int          `json:"brokers"`
				ControllerID int            `json:"controller_id"`
				ClusterID    string         `json:"cluster_id"`
				Topics       map[string]int `json:"topics"`
			}
			rows["list_topics"].ok(t, &got)
			require.Equal(t, []int{1, 2, 3}, got.Brokers)
			require.Contains(t, got.Brokers, got.ControllerID)
			require.NotEmpty(t, got.ClusterID)
			require.Equal(t, 3, got.Topics["events"])
			require.Equal(t, 2, got.Topics["cf-doomed"], "listed before its deletion")
		})
		t.Run("delete_topics", func(t *testing.T) {
			var got []string
			rows["delete_topics"].ok(t, &got)
			require.NotContains(t, got, "cf-doomed")
			require.Contains(t, got, "cf-conf")
			require.NotContains(t, f.topicNames(), "cf-doomed")
		})
		t.Run("create_partitions", func(t *testing.T) {
			skipGrow(t)
			var got int
			rows["create_partitions"].ok(t, &got)
			require.Equal(t, 4, got)
			require.Equal(t, 4, f.partitionCount(t, "cf-grow"))
		})
	})

	t.Run("kcat", func(t *testing.T) {
		t.Run("-L", func(t *testing.T) {
			var md struct {
				Brokers []struct {
					ID int `json:"id"`
				} `json:"brokers"`
				Topics []struct {
					Topic      string `json:"topic"`
					Partitions []struct {
						Replicas []struct {
							ID int `json:"id"`
						} `json:"replicas"`
					} `json:"partitions"`
				} `json:"topics"`
			}
			require.NoError(t, json.Unmarshal([]byte(f.kcat(t, "", "-L", "-J")), &md))
			var ids []int
			for _, b := range md.Brokers {
				ids = append(ids, b.ID)
			}
			require.ElementsMatch(t, []int{1, 2, 3}, ids)
			parts := map[string]int{}
			for _, tp := range md.Topics {
				parts[tp.Topic] = len(tp.Partitions)
				if tp.Topic == "events" {
					for _, p := range tp.Partitions {
						require.Len(t, p.Replicas, 3)
					}
				}
			}
			want := map[string]int{}
			for _, ti := range f.c.Topics() {
				want[ti.Name] = ti.PartitionCount
			}
			require.Equal(t, want, parts)
		})
	})
}
