package kafka_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/kafka/kafkatest"
	"github.com/pystream/pystream/topic/envelope"
)

// confluentPython is a Python interpreter that imports confluent_kafka
// (librdkafka); the test is skipped when there is none.
func confluentPython(t *testing.T) string {
	t.Helper()
	return kafkatest.ConfluentPython(t)
}

// confluentProducer produces lines 0..19 to events/0 with
// enable.idempotence, flushes, and fails unless every message was
// delivered.
const confluentProducer = `
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "enable.idempotence": True, "message.timeout.ms": 8000})
errors = []
def done(err, msg):
    if err is not None:
        errors.append(str(err))
for i in range(20):
    p.produce("events", value=("v%d" % i).encode(), partition=0, on_delivery=done)
left = p.flush(10)
if left or errors:
    print("undelivered", left, errors)
    sys.exit(1)
`

// TestKafkaIdempotentConfluentKafka: confluent-kafka (librdkafka from
// Python) with enable.idempotence=True — which fails at once against a
// broker without InitProducerID — produces, and each record is stored
// once, with its producer identity.
func TestKafkaIdempotentConfluentKafka(t *testing.T) {
	py := confluentPython(t)
	f := start(t, 1, 1, 1)
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(c, py, "-c", confluentProducer, f.srv.Addr(1)).CombinedOutput()
	require.NoError(t, err, "%s", out)
	recs, err := f.c.ReadCommitted("events", 0, 0, 100)
	require.NoError(t, err)
	require.Len(t, recs, 20)
	var vals []string
	for i, r := range recs {
		rec := envelope.Decode(r.Payload)
		require.True(t, rec.HasProducer, "written by an idempotent producer")
		require.EqualValues(t, i, rec.Producer.Sequence)
		vals = append(vals, string(rec.Value))
	}
	require.Equal(t, "v0 v1 v2", strings.Join(vals[:3], " "))
}
