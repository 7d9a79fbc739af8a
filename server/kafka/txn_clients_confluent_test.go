package kafka_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// confluentTransactions, given a bootstrap address, commits records c0..c4
// to events/0 in one transaction (init_transactions, begin_transaction,
// produce, commit_transaction) and aborts a0..a4 in another (flushed
// first, so that they are written before the abort), then writes the
// sentinel with a plain idempotent producer. It then reads events/0 from
// the start with a consumer at each isolation level up to the sentinel,
// and prints what each read as JSON.
const confluentTransactions = `
import json, sys, time
from confluent_kafka import Consumer, Producer, TopicPartition
addr, sentinel = sys.argv[1], sys.argv[2]
p = Producer({"bootstrap.servers": addr, "transactional.id": "confluent-txn",
              "transaction.timeout.ms": 10000, "message.timeout.ms": 8000})
p.init_transactions(10)
p.begin_transaction()
for i in range(5):
    p.produce("events", value=("c%d" % i).encode(), partition=0)
p.commit_transaction(10)
p.begin_transaction()
for i in range(5):
    p.produce("events", value=("a%d" % i).encode(), partition=0)
if p.flush(10):
    sys.exit("the aborted transaction's records were not delivered")
p.abort_transaction(10)

plain = Producer({"bootstrap.servers": addr, "enable.idempotence": True, "message.timeout.ms": 8000})
plain.produce("events", value=sentinel.encode(), partition=0)
if plain.flush(10):
    sys.exit("the sentinel was not delivered")

def read(level):
    c = Consumer({"bootstrap.servers": addr, "group.id": "confluent-" + level, "isolation.level": level,
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.assign([TopicPartition("events", 0, 0)])
    got, deadline = [], time.time() + 10
    try:
        while time.time() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                sys.exit("%s: %s" % (level, m.error()))
            if m.value().decode() == sentinel:
                return got
            got.append(m.value().decode())
        sys.exit("%s: no sentinel after 10 s; read %s" % (level, got))
    finally:
        c.close()

print(json.dumps({"read_committed": read("read_committed"), "read_uncommitted": read("read_uncommitted")}))
`

// TestKafkaTxnConfluentKafka: confluent-kafka (librdkafka from Python)
// with a transactional.id commits one transaction and aborts another;
// its read_committed consumer (isolation.level) reads the committed
// records only, its read_uncommitted one both transactions' records.
func TestKafkaTxnConfluentKafka(t *testing.T) {
	py := confluentPython(t)
	f := start(t, 1, 1, 1)
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(c, py, "-c", confluentTransactions, f.srv.Addr(1), sentinel)
	out, err := cmd.Output()
	var stderr string
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "%s%s", out, stderr)
	var got struct {
		Committed   []string `json:"read_committed"`
		Uncommitted []string `json:"read_uncommitted"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Equal(t, []string{"c0", "c1", "c2", "c3", "c4"}, got.Committed)
	require.Equal(t, []string{"c0", "c1", "c2", "c3", "c4", "a0", "a1", "a2", "a3", "a4"}, got.Uncommitted)
}
