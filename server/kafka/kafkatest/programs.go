package kafkatest

// KafkaPythonMatrix makes each kafka-python KafkaAdminClient call the
// matrix tests (argv: bootstrap server, "1" to call create_partitions,
// the seconds a change takes to reach every broker).
const KafkaPythonMatrix = `import json, sys, time
import kafka
from kafka.admin import KafkaAdminClient, ConfigResource, ConfigResourceType, NewPartitions
rows = {"_version": kafka.__version__}
# A change the controller acknowledged reaches every broker's metadata
# within argv[3] seconds (0: at once): read until done, or that deadline.
SETTLE = float(sys.argv[3])
def settled(read, done):
    end = time.time() + SETTLE
    while True:
        v = read()
        if done(v) or time.time() >= end:
            return v
        time.sleep(0.05)
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
    return {"codes": {r[3]: r[0] for r in resp.resources}, "after": settled(lambda: described([topic("kp-conf", ["segment.ms", "retention.ms"])])["kp-conf"], lambda c: c["configs"].get("segment.ms") == "5000")}
row("alter_configs", alter)
def delete_topics():
    resp = adm.delete_topics(["kp-doomed"], timeout_ms=10000)
    return {"codes": {t: c for t, c in resp.topic_error_codes}, "after": settled(lambda: sorted(adm.list_topics()), lambda ts: "kp-doomed" not in ts)}
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
        parts = settled(lambda: [len(t["partitions"]) for t in adm.describe_topics(["kp-grow"])], lambda ps: ps == [4])
        return {"errors": {t[0]: [t[1], t[2] or ""] for t in resp.topic_errors}, "partitions": parts}
    row("create_partitions", grow)
adm.close()
print(json.dumps(rows))
`

// ConfluentMatrix makes each confluent-kafka AdminClient call the matrix
// tests, marking those its version lacks absent (argv: bootstrap server,
// "1" to call create_partitions, the seconds a change takes to reach
// every broker).
const ConfluentMatrix = `import json, sys, time
import confluent_kafka
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions
rows = {"_version": "%s (librdkafka %s)" % (confluent_kafka.version()[0], confluent_kafka.libversion()[0])}
# A change the controller acknowledged reaches every broker's metadata
# within argv[3] seconds (0: at once): read until done, or that deadline.
SETTLE = float(sys.argv[3])
def settled(read, done):
    end = time.time() + SETTLE
    while True:
        v = read()
        if done(v) or time.time() >= end:
            return v
        time.sleep(0.05)
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
    return settled(lambda: described([ConfigResource("TOPIC", "cf-conf")])["cf-conf"], lambda c: c.get("segment.ms") == "5000")
row("alter_configs", alter)
def incremental():
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry
    res = ConfigResource("TOPIC", "cf-conf", incremental_configs=[
        ConfigEntry("retention.bytes", "1048576", incremental_operation=AlterConfigOpType.SET)])
    for f in adm.incremental_alter_configs([res], request_timeout=T).values():
        f.result()
    return settled(lambda: described([ConfigResource("TOPIC", "cf-conf")])["cf-conf"], lambda c: c.get("retention.bytes") == "1048576")
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
    return settled(lambda: sorted(adm.list_topics(timeout=T).topics), lambda ts: "cf-doomed" not in ts)
row("delete_topics", delete_topics)
if sys.argv[2] == "1":
    def grow():
        for f in adm.create_partitions([NewPartitions("cf-grow", 4)], operation_timeout=T, request_timeout=T).values():
            f.result()
        return settled(lambda: len(adm.list_topics(topic="cf-grow", timeout=T).topics["cf-grow"].partitions), lambda n: n == 4)
    row("create_partitions", grow)
print(json.dumps(rows))
`
