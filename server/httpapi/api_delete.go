package httpapi

import (
	"errors"
	"net/http"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
)

// handleDeleteTopic answers DELETE /api/topics/{topic}: the topic, all its
// records and every consumer's committed offsets on it are deleted
// (cluster.DeleteTopic: durable, and a crash leaves the whole topic or
// nothing). 200 with what was deleted; 404 for an unknown topic; a request
// body is refused (400). When the topic left cluster.meta but some of its
// files could not be removed, the answer is a 500 saying so: the topic is
// deleted all the same, and its name cannot be created again until they
// are.
func (a *API) handleDeleteTopic(w http.ResponseWriter, r *http.Request) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	if ae := a.noBody(w, r); ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := a.admin.DeleteTopic(name)
	if err == nil || tookEffect(err) || errors.Is(err, cluster.ErrDeleteUnfinished) {
		a.ops.ForgetTopic(name)
	}
	a.operated(err)
	if err != nil {
		writeAPIError(w, a.opError("delete topic", err))
		return
	}
	a.logger.Info("topic deleted", "topic", name, "partitions", res.PartitionCount,
		"replication_factor", res.ReplicationFactor, "consumer_offsets", res.OffsetFiles)
	writeJSON(w, http.StatusOK, apiclient.DeleteTopicResponse{Name: res.Topic, PartitionCount: res.PartitionCount,
		ReplicationFactor: res.ReplicationFactor, ConsumerOffsets: res.OffsetFiles})
}
