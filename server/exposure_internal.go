package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/pystream/pystream/server/clustertls"
)

// The internal port's safe default
// (docs/security.md § The internal port). In cluster mode every node listens on its PYSTREAM_CLUSTER
// address for Raft and the replication API, which can do everything: read
// and write every replica, change the metadata, add voters. With
// PYSTREAM_CLUSTER_TLS_* it speaks mutual TLS and only the cluster's nodes
// get in. Without them it is plain TCP, allowed only while every internal
// address is a loopback one (a cluster on one machine, as `make cluster`
// runs it without certificates), or with PYSTREAM_INSECURE, logged as a
// WARNING at every start.

// ErrInternalExposed is the cause of an *InternalExposedError.
var ErrInternalExposed = errors.New("server: non-loopback internal address without cluster TLS")

// InternalExposedError is a cluster-mode configuration whose internal
// port, open to anyone without a certificate, is on an address other
// machines reach.
type InternalExposedError struct {
	// Addrs are the internal addresses that are not loopback ones.
	Addrs []string
}

func (e *InternalExposedError) Error() string {
	return fmt.Sprintf("the internal addresses %s are not loopback addresses and PYSTREAM_CLUSTER_TLS_CERT is not set: "+
		"anyone who reaches the internal port could read and write every replica, change the cluster's metadata and add itself as a voter. "+
		"Set PYSTREAM_CLUSTER_TLS_CERT, PYSTREAM_CLUSTER_TLS_KEY and PYSTREAM_CLUSTER_TLS_CA (pystream cluster certs makes them; docs/security.md), "+
		"use 127.0.0.1 addresses in PYSTREAM_CLUSTER, or set PYSTREAM_INSECURE=true to run the internal port in the clear anyway",
		strings.Join(e.Addrs, ", "))
}

// Unwrap returns ErrInternalExposed.
func (e *InternalExposedError) Unwrap() error { return ErrInternalExposed }

// ClusterTLSEnabled reports whether the internal port speaks mutual TLS.
func (c Config) ClusterTLSEnabled() bool { return c.ClusterTLSCert != "" }

// checkInternalExposure is the internal port's rule, a pure function of
// the configuration: nil outside cluster mode, with cluster TLS, with
// Insecure, or when every internal address (every PYSTREAM_CLUSTER entry,
// this node's listen address among them) is a loopback one; else an
// *InternalExposedError naming the others.
func checkInternalExposure(cfg Config) error {
	if !cfg.ClusterMode() || cfg.ClusterTLSEnabled() || bool(cfg.Insecure) {
		return nil
	}
	var exposed []string
	for _, entry := range strings.Split(cfg.Cluster.String(), ",") {
		if entry == "" {
			continue
		}
		_, addr, _ := strings.Cut(entry, "=")
		host, _, err := net.SplitHostPort(addr)
		if err != nil || !isLoopbackHost(host) {
			exposed = append(exposed, addr)
		}
	}
	if len(exposed) > 0 {
		return &InternalExposedError{Addrs: exposed}
	}
	return nil
}

// validateClusterTLS checks that the cluster TLS variables come together,
// and in cluster mode only. It reads no file (loadClusterTLS does).
func (c Config) validateClusterTLS() error {
	set := 0
	for _, v := range []string{c.ClusterTLSCert, c.ClusterTLSKey, c.ClusterTLSCa} {
		if v != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return nil
	case !c.ClusterMode():
		return &ConfigError{Var: EnvPrefix + "_CLUSTER_TLS_CERT", Value: c.ClusterTLSCert, Allowed: "set only in cluster mode (PYSTREAM_NODE_ID and PYSTREAM_CLUSTER)"}
	case c.ClusterTLSCert == "":
		return &ConfigError{Var: EnvPrefix + "_CLUSTER_TLS_CERT", Value: "", Allowed: "this node's certificate file: set PYSTREAM_CLUSTER_TLS_CERT, _KEY and _CA together, or none"}
	case c.ClusterTLSKey == "":
		return &ConfigError{Var: EnvPrefix + "_CLUSTER_TLS_KEY", Value: "", Allowed: "the private key file of PYSTREAM_CLUSTER_TLS_CERT: set PYSTREAM_CLUSTER_TLS_CERT, _KEY and _CA together, or none"}
	case c.ClusterTLSCa == "":
		return &ConfigError{Var: EnvPrefix + "_CLUSTER_TLS_CA", Value: "", Allowed: "the cluster CA's certificate file: set PYSTREAM_CLUSTER_TLS_CERT, _KEY and _CA together, or none"}
	}
	return nil
}

// loadClusterTLS reads this node's identity on the internal port, nil
// without cluster TLS. A file that cannot be used, or a certificate that
// names another node than PYSTREAM_NODE_ID, is a *ConfigError naming the
// variable.
func loadClusterTLS(cfg Config) (*clustertls.Identity, error) {
	if err := cfg.validateClusterTLS(); err != nil {
		return nil, err
	}
	if !cfg.ClusterTLSEnabled() {
		return nil, nil
	}
	ident, err := clustertls.Load(cfg.ClusterTLSCert, cfg.ClusterTLSKey, cfg.ClusterTLSCa)
	var fe *clustertls.FileError
	if errors.As(err, &fe) {
		suffix := map[string]string{"certificate": "_CLUSTER_TLS_CERT", "key": "_CLUSTER_TLS_KEY", "CA": "_CLUSTER_TLS_CA"}[fe.Which]
		return nil, tlsFileError(suffix, fe.Path, "a PEM "+fe.Which+" file of the cluster's certificates", err)
	}
	if err != nil {
		return nil, err
	}
	if ident.ID != int(cfg.NodeID) {
		return nil, &ConfigError{Var: EnvPrefix + "_CLUSTER_TLS_CERT", Value: cfg.ClusterTLSCert,
			Allowed: fmt.Sprintf("node %d's certificate (it names node %d, %s)", cfg.NodeID, ident.ID, clustertls.NodeURI(ident.ID))}
	}
	return ident, nil
}

// checkInternal applies the internal port's rule and reads its
// identity: what checkSecurity and loadAuth call.
func checkInternal(cfg Config) (*clustertls.Identity, error) {
	if err := checkInternalExposure(cfg); err != nil {
		return nil, err
	}
	return loadClusterTLS(cfg)
}

// logInternalExposure says at start-up whether the internal port is
// authenticated and encrypted.
func logInternalExposure(logger *slog.Logger, cfg Config, ident *clustertls.Identity) {
	switch {
	case !cfg.ClusterMode():
	case ident != nil:
		logger.Info("internal port: mutual TLS 1.3, authenticated and encrypted; only the cluster CA's nodes get in",
			"addr", cfg.Cluster[int(cfg.NodeID)], "authenticated", true, "encrypted", true,
			"identity", clustertls.NodeURI(ident.ID).String(), "not_after", ident.Leaf.NotAfter.UTC().Format("2006-01-02T15:04:05Z"))
	case checkInternalExposure(Config{NodeID: cfg.NodeID, Cluster: cfg.Cluster}) != nil:
		logger.Warn("INSECURE: PYSTREAM_INSECURE=true runs the internal port in the clear on non-loopback addresses; "+
			"anyone who reaches it can read and write every replica, change the metadata and add voters. "+
			"Set PYSTREAM_CLUSTER_TLS_CERT, _KEY and _CA (docs/security.md)",
			"addr", cfg.Cluster[int(cfg.NodeID)], "authenticated", false, "encrypted", false)
	default:
		logger.Info("internal port: plain TCP, neither authenticated nor encrypted, on loopback addresses only",
			"addr", cfg.Cluster[int(cfg.NodeID)], "authenticated", false, "encrypted", false, "nodes", strconv.Itoa(len(cfg.Cluster)))
	}
}

// loadInternal is loadAuth's part for the internal port: the rule, the
// identity (kept for the node) and the start-up line.
func (s *Server) loadInternal() error {
	ident, err := checkInternal(s.cfg)
	if err != nil {
		return err
	}
	s.clusterTLS = ident
	logInternalExposure(s.logger, s.cfg, ident)
	return nil
}
