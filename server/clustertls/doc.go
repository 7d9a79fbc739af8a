// Package clustertls is the mutual TLS of a PyStream cluster's internal
// port (docs/security.md § The internal port): the certificates nodes
// present to each other, how a node's id is read from one, and the one
// tls.Config both ends of an internal connection use.
//
// # Identity
//
// A node is its id. Its certificate names it with one URI subject
// alternative name, "pystream-node:ID" (NodeURI; NodeID reads it, and
// nothing else does): not a host name, because routes, tunnels and NAT
// change the address that reaches a node, never its id. The common name,
// "pystream-node-ID", is for people only.
//
// # Trust
//
// One cluster CA signs every node's certificate, and each node trusts that
// CA alone (PYSTREAM_CLUSTER_TLS_CA). A connection between two nodes is TLS
// 1.3 and both ends present a certificate (Identity.Config). Each end checks
// the other's: signed by the CA, within its validity window, valid for both
// client and server authentication, naming one node id. Then the
// accepting end asks whether that id is a member of the cluster, and a
// dialing end whether it is the node it meant to reach (WantNode). A
// failed check fails the handshake: no byte of the connection reaches the
// protocol behind it.
//
// # Files
//
// WriteDir makes a directory of certificates with the standard library
// alone (ECDSA P-256 keys):
//
//	ca.pem            the CA certificate, PYSTREAM_CLUSTER_TLS_CA of every node
//	ca-key.pem        its key (0600): keep it to issue more nodes' certificates
//	node-ID.pem       node ID's certificate, PYSTREAM_CLUSTER_TLS_CERT
//	node-ID-key.pem   its key (0600), PYSTREAM_CLUSTER_TLS_KEY
//
// It never overwrites a file, so running it again with more nodes adds
// theirs under the same CA. `pystream cluster certs DIR --nodes N` is it
// on the command line.
//
// Left out: revocation (replace the CA and every certificate instead) and
// rotation without a restart (the files are read at start-up).
package clustertls
