// Package server is a PyStream layer; see its README.
package server
