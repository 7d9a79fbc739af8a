package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
)

// rawConn is a minimal HTTP/1.1 client on one keep-alive connection: one
// request, then its answer, then the next, as wrk and most load generators
// do. Go's http.Client spends more CPU per request than the server handling
// it on a two-core machine, which would measure the client, not PyStream.
type rawConn struct {
	conn net.Conn
	r    *bufio.Reader
	tp   *textproto.Reader
	req  []byte
}

func dialRaw(addr string) (*rawConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	return &rawConn{conn: c, r: r, tp: textproto.NewReader(r)}, nil
}

func (c *rawConn) Close() error { return c.conn.Close() }

// post sends one octet-stream record and reads the answer, which must be
// 2xx with a Content-Length body.
func (c *rawConn) post(path string, body []byte) error {
	c.req = c.req[:0]
	c.req = fmt.Appendf(c.req, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", path, len(body))
	c.req = append(c.req, body...)
	if _, err := c.conn.Write(c.req); err != nil {
		return err
	}
	status, err := c.tp.ReadLine()
	if err != nil {
		return err
	}
	hdr, err := c.tp.ReadMIMEHeader()
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(hdr.Get("Content-Length"))
	if err != nil {
		return fmt.Errorf("answer without Content-Length: %q", status)
	}
	answer := make([]byte, n)
	if _, err := io.ReadFull(c.r, answer); err != nil {
		return err
	}
	if f := strings.Fields(status); len(f) < 2 || f[1][0] != '2' {
		return fmt.Errorf("POST %s: %s: %s", path, status, answer)
	}
	return nil
}
