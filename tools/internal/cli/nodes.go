package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/spf13/cobra"
)

// This file holds the commands of a cluster-mode cluster's nodes: cluster
// nodes, add-node and remove-node, over /api/cluster/nodes.

func (a *app) clusterNodesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "nodes",
		Short: "List the nodes of a cluster-mode cluster: voters, registered brokers, the controller",
		Long: `Lists the nodes of a cluster-mode cluster (PYSTREAM_NODE_ID, PYSTREAM_CLUSTER) as
the server at --server knows them: ID, internal ADDR, HTTP-ADDR ("-" until the
node has registered), KAFKA-ADDR (its Kafka listener; "-" when it serves none),
VOTER (a member of the metadata group; a removed node
stays listed as a broker, no) and CONTROLLER (the group's leader). An embedded
server has no nodes and says so. --json prints the API's answer.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.ClusterNodes(cmd.Context())
			if err != nil {
				return a.apiError("cluster nodes", err)
			}
			if a.g.json {
				return a.printJSON(res)
			}
			if res.Mode != apiclient.ModeCluster {
				_, err := fmt.Fprintln(a.env.Stdout, "the server runs the embedded cluster: it has no nodes (pystream cluster status lists its brokers)")
				return err
			}
			rows := make([][]string, len(res.Nodes))
			for i, n := range res.Nodes {
				rows[i] = []string{strconv.Itoa(n.ID), n.Addr, orDash(n.HTTPAddr), orDash(n.KafkaAddr), yesNo(n.Voter), yesNo(n.Leader)}
			}
			return writeTable(a.env.Stdout, []string{"ID", "ADDR", "HTTP-ADDR", "KAFKA-ADDR", "VOTER", "CONTROLLER"}, rows)
		},
	}
}

func (a *app) addNodeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "add-node ID ADDR",
		Short: "Add a node, started with PYSTREAM_JOIN=on at internal address ADDR, to the metadata group",
		Long: `Makes node ID, started with PYSTREAM_JOIN=on and listening at its internal
address ADDR (host:port, its entry in PYSTREAM_CLUSTER), a voter of the
metadata group; it then receives the metadata and registers as a broker.
Start the node first: the new voter counts in every majority at once, so a
node that does not answer is refused and nothing changes.
Adding a voter again at another address moves it. --json prints the nodes
after the change.`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := intArg("node id", args[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.AddNode(cmd.Context(), id, args[1])
			if err != nil {
				return a.apiError("cluster add-node "+args[0]+" "+args[1], err)
			}
			if a.g.json {
				return a.printJSON(res)
			}
			_, err = fmt.Fprintf(a.env.Stdout, "node %d added at %s (%s)\n", id, args[1], nodesSummary(res))
			return err
		},
	}
}

func (a *app) removeNodeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "remove-node ID",
		Short: "Remove a node from the metadata group (a machine lost for good)",
		Long: `Takes node ID out of the metadata group's voters. Its broker stays registered:
its replicas leave the active sets once its heartbeats stop, and a node
started again with the same id joins in its place (add-node). The last voter
cannot be removed. --json prints the nodes after the change.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := intArg("node id", args[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.RemoveNode(cmd.Context(), id)
			if err != nil {
				return a.apiError("cluster remove-node "+args[0], err)
			}
			if a.g.json {
				return a.printJSON(res)
			}
			_, err = fmt.Fprintf(a.env.Stdout, "node %d removed from the metadata group (%s)\n", id, nodesSummary(res))
			return err
		},
	}
}

// nodesSummary says who votes and who leads after a change:
// "voters 1,2,3, controller 1" ("controller none" during an election).
func nodesSummary(res *apiclient.ClusterNodesResponse) string {
	var voters []int
	for _, n := range res.Nodes {
		if n.Voter {
			voters = append(voters, n.ID)
		}
	}
	controller := "none"
	if res.Controller != 0 {
		controller = strconv.Itoa(res.Controller)
	}
	return fmt.Sprintf("voters %s, controller %s", joinInts(voters), controller)
}

// yesNo writes a flag of a table.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// orDash writes a value that may be unknown, "-" when it is.
func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
