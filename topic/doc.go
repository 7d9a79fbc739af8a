// Package topic is a PyStream layer; see its README.
package topic
