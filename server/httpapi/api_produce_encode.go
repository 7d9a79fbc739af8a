package httpapi

import (
	"strconv"

	"github.com/pystream/pystream/cluster"
)

// encodeOneResult encodes the answer to a one-record produce,
//
//	{"records":[{"partition":0,"offset":5,"timestamp":...,"timestamp_ms":...,"leader":1,"brokers":[1,2]}]}
//
// by appending to one buffer instead of through encoding/json: it is the
// answer of the busiest request, one record per request from many clients.
// It must stay byte for byte what json.Marshal of apiclient.ProduceResponse
// writes, plus the newline; a test compares the two.
func encodeOneResult(res cluster.SendResult) []byte {
	b := make([]byte, 0, 128)
	b = append(b, `{"records":[{"partition":`...)
	b = strconv.AppendInt(b, int64(res.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, res.Offset, 10)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, res.Timestamp, 10)
	b = append(b, `,"timestamp_ms":`...)
	b = strconv.AppendInt(b, unixMillis(res.Timestamp), 10)
	b = append(b, `,"leader":`...)
	b = strconv.AppendInt(b, int64(res.LeaderBrokerID), 10)
	b = append(b, `,"brokers":`...)
	if res.Brokers == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, id := range res.Brokers {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(id), 10)
		}
		b = append(b, ']')
	}
	return append(b, "}]}\n"...)
}
