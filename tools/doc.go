// Package tools holds the pystream command-line tool (cmd/pystream).
package tools
