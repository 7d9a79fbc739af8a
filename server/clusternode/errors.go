package clusternode

import (
	"errors"
)

var (
	// ErrInvalidConfig is wrapped by every configuration error of Open.
	ErrInvalidConfig = errors.New("clusternode: invalid configuration")
	// ErrNoLeader is returned while the metadata group has no leader (an
	// election is under way, or a majority of nodes is unreachable).
	ErrNoLeader = errors.New("clusternode: the cluster has no controller leader")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("clusternode: closed")
)
