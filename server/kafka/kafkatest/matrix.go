package kafkatest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/topic"
)

// Target is a cluster the admin matrix runs against, prepared as the
// matrix expects: brokers 1, 2 and 3; topic "events" with three
// partitions of three replicas each; per client prefix ("kp" for
// kafka-python, "cf" for confluent-kafka) topics "-conf" (with a
// retention.ms override of 60000), "-doomed" and "-grow" of two
// partitions each; and groups "kp-keep", "kp-gone", "cf-keep" and
// "cf-gone" with committed offsets and no members. What differs between
// the embedded cluster and a cluster of processes is a field here.
type Target struct {
	// Bootstrap is the Kafka listener every client starts from.
	Bootstrap string
	// Brokers is every broker id, ascending.
	Brokers []int
	// Controller is the broker Metadata and DescribeCluster name the
	// controller.
	Controller int
	// GroupLister is the broker whose ListGroups lists every group (the
	// group coordinator); every other broker lists none.
	GroupLister int
	// Grow says whether the listener serves CreatePartitions;
	// create_partitions skips when it does not.
	Grow bool
	// BrokerConfig is what broker id describes as its configuration.
	BrokerConfig func(id int) map[string]string
	// Overrides is topic name's configuration overrides as the cluster
	// keeps them.
	Overrides func(t *testing.T, name string) map[string]string
	// Topics is the partition count of every topic as the cluster keeps
	// it.
	Topics func(t *testing.T) map[string]int
	// Settle is how long a change the controller acknowledged may take
	// to reach every node's metadata, as Kafka's admin clients document
	// for a cluster of brokers; 0 (the embedded cluster, whose brokers
	// read one metadata) means at once. The programs and the checks of
	// the cluster's state read again until then, never longer.
	Settle time.Duration
}

// settled checks cond until it holds or tg.Settle has passed, failing
// with why; with Settle 0 it checks once.
func (tg Target) settled(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(tg.Settle)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if !time.Now().Before(deadline) {
			require.Failf(t, what, "%s (after %v)", why, tg.Settle)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hasNot settles until the cluster keeps no topic name.
func (tg Target) hasNot(t *testing.T, name string) {
	t.Helper()
	tg.settled(t, name+" is deleted", func() (bool, string) {
		ts := tg.Topics(t)
		_, ok := ts[name]
		return !ok, fmt.Sprintf("topics %v", ts)
	})
}

// partitions settles until the cluster keeps topic name with n
// partitions.
func (tg Target) partitions(t *testing.T, name string, n int) {
	t.Helper()
	tg.settled(t, fmt.Sprintf("%s has %d partitions", name, n), func() (bool, string) {
		got := tg.Topics(t)[name]
		return got == n, fmt.Sprintf("%d partitions", got)
	})
}

// TopicDefaults is every topic key's server-wide default, with edits.
func TopicDefaults(edits map[string]string) map[string]string {
	out := topic.DefaultConfig().Strings()
	for k, v := range edits {
		out[k] = v
	}
	return out
}

// DefaultBrokerConfig is what broker id describes when the server runs on
// its defaults.
func DefaultBrokerConfig(id int) map[string]string {
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

// clusterInfo is what describe_cluster and list_topics read back about
// the brokers.
type clusterInfo struct {
	Brokers      []int  `json:"brokers"`
	ControllerID int    `json:"controller_id"`
	ClusterID    string `json:"cluster_id"`
}

// check asserts the brokers, the controller and a cluster id.
func (c clusterInfo) check(t *testing.T, tg Target) {
	t.Helper()
	require.Equal(t, tg.Brokers, c.Brokers)
	require.Equal(t, tg.Controller, c.ControllerID)
	require.NotEmpty(t, c.ClusterID)
}

// RunAdminMatrix is the compatibility matrix's Python and kcat rows
// (docs/kafka-admin.md § Clients tested) against tg: kafka-python's
// KafkaAdminClient and confluent-kafka's AdminClient (librdkafka), each
// run once as one program that makes every call and prints what it read
// back as JSON, and kcat -L; each call is a subtest named after its
// client and call, so that go test -v reads as the table. Each call's
// result is read back (a config's value, a topic gone from the list, each
// group listed once, by the coordinator), not only free of errors.
func RunAdminMatrix(t *testing.T, tg Target) {
	skipGrow := func(t *testing.T) {
		if !tg.Grow {
			t.Skip("CreatePartitions not served yet")
		}
	}

	t.Run("kafka-python", func(t *testing.T) {
		rows, version := RunProgram(t, KafkaPython(t), KafkaPythonMatrix, tg.Bootstrap, tg.Grow, tg.Settle)
		t.Logf("kafka-python %s", version)
		type described map[string]struct {
			Code    int16             `json:"code"`
			Message string            `json:"message"`
			Configs map[string]string `json:"configs"`
		}
		t.Run("describe_configs_topic", func(t *testing.T) {
			var got described
			rows["describe_configs_topic"].Decode(t, &got)
			require.Zero(t, got["kp-conf"].Code, got["kp-conf"].Message)
			require.Equal(t, TopicDefaults(map[string]string{"retention.ms": "60000"}), got["kp-conf"].Configs)
		})
		t.Run("describe_configs_broker", func(t *testing.T) {
			var got described
			rows["describe_configs_broker"].Decode(t, &got)
			require.Zero(t, got["2"].Code, got["2"].Message)
			require.Equal(t, tg.BrokerConfig(2), got["2"].Configs)
		})
		t.Run("alter_configs", func(t *testing.T) {
			var got struct {
				Codes map[string]int16 `json:"codes"`
				After struct {
					Configs map[string]string `json:"configs"`
				} `json:"after"`
			}
			rows["alter_configs"].Decode(t, &got)
			require.Equal(t, map[string]int16{"kp-conf": 0}, got.Codes)
			def := topic.DefaultConfig().Strings()
			require.Equal(t, map[string]string{"segment.ms": "5000", "retention.ms": def["retention.ms"]}, got.After.Configs, "the whole set replaced")
			tg.settled(t, "kp-conf's overrides replaced", func() (bool, string) {
				o := tg.Overrides(t, "kp-conf")
				return fmt.Sprint(o) == "map[segment.ms:5000]", fmt.Sprint(o)
			})
		})
		t.Run("delete_topics", func(t *testing.T) {
			var got struct {
				Codes map[string]int16 `json:"codes"`
				After []string         `json:"after"`
			}
			rows["delete_topics"].Decode(t, &got)
			require.Equal(t, map[string]int16{"kp-doomed": 0}, got.Codes)
			require.NotContains(t, got.After, "kp-doomed")
			require.Contains(t, got.After, "kp-conf")
			tg.hasNot(t, "kp-doomed")
		})
		t.Run("list_consumer_groups", func(t *testing.T) {
			var got map[string][]string
			rows["list_consumer_groups"].Decode(t, &got)
			require.Len(t, got, len(tg.Brokers), "every broker asked")
			for _, id := range tg.Brokers {
				if id != tg.GroupLister {
					require.Empty(t, got[strconv.Itoa(id)], "broker %d lists no group: broker %d does", id, tg.GroupLister)
				}
			}
			require.Equal(t, map[string]int{"kp-keep": 1, "kp-gone": 1, "cf-keep": 1, "cf-gone": 1}, counted(got[strconv.Itoa(tg.GroupLister)]),
				"broker %d lists each group once", tg.GroupLister)
		})
		t.Run("delete_consumer_groups", func(t *testing.T) {
			var got struct {
				Results map[string]string `json:"results"`
				After   []string          `json:"after"`
			}
			rows["delete_consumer_groups"].Decode(t, &got)
			require.Equal(t, map[string]string{"kp-gone": "NoError"}, got.Results)
			require.ElementsMatch(t, []string{"kp-keep", "cf-keep", "cf-gone"}, got.After)
		})
		t.Run("describe_cluster", func(t *testing.T) {
			var got clusterInfo
			rows["describe_cluster"].Decode(t, &got)
			got.check(t, tg)
		})
		t.Run("create_partitions", func(t *testing.T) {
			skipGrow(t)
			var got struct {
				Errors     map[string][]any `json:"errors"`
				Partitions []int            `json:"partitions"`
			}
			rows["create_partitions"].Decode(t, &got)
			require.Equal(t, map[string][]any{"kp-grow": {0.0, ""}}, got.Errors)
			require.Equal(t, []int{4}, got.Partitions)
			tg.partitions(t, "kp-grow", 4)
		})
	})

	t.Run("confluent-kafka", func(t *testing.T) {
		rows, version := RunProgram(t, ConfluentPython(t), ConfluentMatrix, tg.Bootstrap, tg.Grow, tg.Settle)
		t.Logf("confluent-kafka %s", version)
		absent := func(t *testing.T, call string) {
			t.Helper()
			if rows[call].Absent {
				t.Skipf("confluent-kafka %s has no AdminClient.%s", version, call)
			}
		}
		t.Run("describe_configs_topic", func(t *testing.T) {
			var got map[string]map[string]string
			rows["describe_configs_topic"].Decode(t, &got)
			require.Equal(t, TopicDefaults(map[string]string{"retention.ms": "60000"}), got["cf-conf"])
		})
		t.Run("describe_configs_broker", func(t *testing.T) {
			var got map[string]map[string]string
			rows["describe_configs_broker"].Decode(t, &got)
			require.Equal(t, tg.BrokerConfig(3), got["3"])
		})
		t.Run("alter_configs", func(t *testing.T) {
			var got map[string]string
			rows["alter_configs"].Decode(t, &got)
			require.Equal(t, TopicDefaults(map[string]string{"segment.ms": "5000"}), got, "the whole set replaced")
		})
		t.Run("incremental_alter_configs", func(t *testing.T) {
			absent(t, "incremental_alter_configs")
			var got map[string]string
			rows["incremental_alter_configs"].Decode(t, &got)
			require.Equal(t, TopicDefaults(map[string]string{"segment.ms": "5000", "retention.bytes": "1048576"}), got)
		})
		t.Run("list_groups", func(t *testing.T) {
			absent(t, "list_groups")
			var got []string
			rows["list_groups"].Decode(t, &got)
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
			rows["delete_consumer_groups"].Decode(t, &got)
			require.Contains(t, got, "cf-keep")
			require.NotContains(t, got, "cf-gone")
		})
		t.Run("describe_cluster", func(t *testing.T) {
			absent(t, "describe_cluster")
			var got clusterInfo
			rows["describe_cluster"].Decode(t, &got)
			got.check(t, tg)
		})
		t.Run("list_topics", func(t *testing.T) {
			var got struct {
				clusterInfo
				Topics map[string]int `json:"topics"`
			}
			rows["list_topics"].Decode(t, &got)
			got.check(t, tg)
			require.Equal(t, 3, got.Topics["events"])
			require.Equal(t, 2, got.Topics["cf-doomed"], "listed before its deletion")
		})
		t.Run("delete_topics", func(t *testing.T) {
			var got []string
			rows["delete_topics"].Decode(t, &got)
			require.NotContains(t, got, "cf-doomed")
			require.Contains(t, got, "cf-conf")
			tg.hasNot(t, "cf-doomed")
		})
		t.Run("create_partitions", func(t *testing.T) {
			skipGrow(t)
			var got int
			rows["create_partitions"].Decode(t, &got)
			require.Equal(t, 4, got)
			tg.partitions(t, "cf-grow", 4)
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
			// The listener's metadata lists every topic as the cluster
			// keeps it, once what the Python rows changed has reached it.
			tg.settled(t, "kcat -L lists the cluster's topics", func() (bool, string) {
				md.Brokers, md.Topics = nil, nil
				require.NoError(t, json.Unmarshal([]byte(Kcat(t, tg.Bootstrap, "", "-L", "-J")), &md))
				var ids []int
				for _, b := range md.Brokers {
					ids = append(ids, b.ID)
				}
				require.ElementsMatch(t, tg.Brokers, ids)
				parts := map[string]int{}
				for _, tp := range md.Topics {
					parts[tp.Topic] = len(tp.Partitions)
					if tp.Topic == "events" {
						for _, p := range tp.Partitions {
							require.Len(t, p.Replicas, 3)
						}
					}
				}
				want := tg.Topics(t)
				return fmt.Sprint(want) == fmt.Sprint(parts), fmt.Sprintf("listed %v, the cluster keeps %v", parts, want)
			})
		})
	})
}
