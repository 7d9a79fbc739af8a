package httpapi

import (
	"fmt"
	"net/http"

	"github.com/pystream/pystream/server/group"
)

// Where consumer groups live: one rule for both protocols
// (backend.GroupHome, which the wiring decides). In the embedded cluster
// this server coordinates every group; in cluster mode the controller's
// node does, and a group request that reaches another node is sent there
// (docs/groups.md § Cluster mode).

// groupListers are the coordinators whose groups GET /api/groups lists:
// the HTTP groups' and Kafka's classic ones.
func (a *API) groupListers() []group.Lister {
	return []group.Lister{a.groups.Consumer, a.groups.Classic}
}

// notCoordinator returns nil when this server coordinates groups
// (groupCoordinator). On another node it is a 421 not_coordinator naming
// the coordinator's HTTP address, which apiclient follows; while no node
// is known to coordinate them (an election, a new coordinator taking
// over) it is a 503.
func (a *API) notCoordinator() *apiError {
	id, here := a.groups.Home.GroupCoordinator()
	if here {
		return nil
	}
	addr := ""
	if id != 0 && a.members != nil {
		_, nodes, err := a.members.ClusterNodes()
		if err != nil {
			return classify(err)
		}
		for _, n := range nodes {
			if n.ID == id {
				addr = n.HTTPAddr
			}
		}
	}
	if id == 0 || addr == "" {
		e := newAPIError(http.StatusServiceUnavailable, CodeUnavailable,
			"groups are coordinated by the cluster's controller, and none coordinates them now (an election is under way, or the new controller is taking them over); try again")
		if id != 0 {
			e.body.Message = fmt.Sprintf("groups are coordinated by the cluster's controller, node %d, whose HTTP address is not known yet; try again", id)
		}
		return e
	}
	return notCoordinatorError(id, addr)
}

// notCoordinatorError is the 421 that sends a group request to node id,
// the coordinator, at its HTTP address addr.
func notCoordinatorError(id int, addr string) *apiError {
	e := newAPIError(http.StatusMisdirectedRequest, CodeNotCoordinator,
		"node %d coordinates groups (it is the cluster's controller): send group requests to %s", id, addr)
	e.body.Coordinator = addr
	return e
}
