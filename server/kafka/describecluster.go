package kafka

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Endpoint types of DescribeCluster v1+ (KIP-919): a broker listener
// describes the brokers; the controllers are described by a controller's
// own listener, which PyStream does not have.
const (
	endpointBrokers     = 1
	endpointControllers = 2
)

// describeCluster answers DescribeCluster (key 60) v0-v1: the cluster id,
// the controller id and every broker with its advertised address, the
// same facts as the listener's Metadata answer (clusterFacts).
// ClusterAuthorizedOperations is answered when asked for
// (clusterOperations), Kafka's "not asked" value otherwise. v1's
// endpoint type 2 (the controllers) is MISMATCHED_ENDPOINT_TYPE, as a
// Kafka broker's listener answers it, and a type Kafka does not define
// UNSUPPORTED_ENDPOINT_TYPE; either refusal carries nothing of the
// cluster.
func (s *Server) describeCluster(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	switch req.EndpointType {
	case endpointBrokers:
	case endpointControllers:
		resp.ErrorCode = x.code(kerr.MismatchedEndpointType.Code)
		resp.ErrorMessage = kmsg.StringPtr("PyStream's Kafka listeners are brokers' (endpoint type 1): the controller has no listener of its own to describe (endpoint type 2)")
		return resp
	default:
		resp.ErrorCode = x.code(kerr.UnsupportedEndpointType.Code)
		resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("endpoint type %d is not one DescribeCluster defines: 1 describes the brokers", req.EndpointType))
		return resp
	}
	cl := s.clusterFacts()
	resp.ClusterID, resp.ControllerID = cl.id, cl.controller
	for _, n := range cl.nodes {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = n.id, n.host, n.port, n.rack
		resp.Brokers = append(resp.Brokers, b)
	}
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = s.clusterOperations(x)
	}
	return resp
}

func failDescribeCluster(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.DescribeClusterRequest).ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ErrorCode = code
	return resp
}
