// Package client is a PyStream layer; see its README.
package client
