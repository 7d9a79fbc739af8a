package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/pystream/pystream/server/clustertls"
)

// clusterCertsCommand is "pystream cluster certs DIR --nodes N": the
// certificates of a cluster's internal port (server/clustertls,
// docs/security.md § The internal port). It needs no server.
func (a *app) clusterCertsCommand() *cobra.Command {
	var nodes int
	cmd := &cobra.Command{
		Use:   "certs DIR",
		Short: "Make the cluster CA and the nodes' certificates for mutual TLS between nodes",
		Long: `Makes, in DIR (created with mode 0700), a cluster CA (ca.pem, ca-key.pem)
and a certificate for each of nodes 1 to --nodes (node-ID.pem, node-ID-key.pem),
ECDSA P-256, signed by the CA and naming the node as pystream-node:ID. Keys are
written with mode 0600. A CA already in DIR is used, and no file is
overwritten: run it again with a larger --nodes to add nodes' certificates.
Give node ID PYSTREAM_CLUSTER_TLS_CERT=DIR/node-ID.pem,
PYSTREAM_CLUSTER_TLS_KEY=DIR/node-ID-key.pem and PYSTREAM_CLUSTER_TLS_CA=DIR/ca.pem;
keep ca-key.pem away from the nodes.`,
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if nodes < 1 || nodes > clustertls.MaxNodeID {
				return usageErrorf("cluster certs: --nodes %d: want 1 or more", nodes)
			}
			dir := args[0]
			w, err := clustertls.WriteDir(dir, nodes, time.Now())
			if err != nil {
				return fmt.Errorf("cluster certs: %w", err)
			}
			if w.NewCA {
				if _, err := fmt.Fprintf(a.env.Stdout, "made the cluster CA %s (its key %s: keep it off the nodes)\n",
					filepath.Join(dir, clustertls.FileCACert), filepath.Join(dir, clustertls.FileCAKey)); err != nil {
					return err
				}
			}
			for _, id := range w.Nodes {
				if _, err := fmt.Fprintf(a.env.Stdout, "made node %d's certificate %s and key %s\n", id,
					filepath.Join(dir, clustertls.NodeCertFile(id)), filepath.Join(dir, clustertls.NodeKeyFile(id))); err != nil {
					return err
				}
			}
			if !w.NewCA && len(w.Nodes) == 0 {
				_, err = fmt.Fprintf(a.env.Stdout, "nothing to make: %s holds the CA and nodes 1 to %d already\n", dir, nodes)
			}
			return err
		},
	}
	cmd.Flags().IntVar(&nodes, "nodes", 3, "make certificates for nodes 1 to this")
	return cmd
}
