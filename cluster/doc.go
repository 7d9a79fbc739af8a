// Package cluster is a PyStream layer; see its README.
package cluster
