// Package tlstest generates throw-away certificate authorities and
// certificates for tests of PyStream's TLS: a CA, a server certificate for
// 127.0.0.1, ::1 and localhost, and a client certificate for mutual TLS,
// all ECDSA P-256 and valid for one hour. It uses only the standard library
// (crypto/x509) and is test support: no production code imports it.
//
//	pki := tlstest.New(t, t.TempDir())
//	// PYSTREAM_TLS_CERT=pki.ServerCert PYSTREAM_TLS_KEY=pki.ServerKey
//	// PYSTREAM_TLS_CLIENT_CA=pki.CACert
//	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: pki.ClientTLS()}}
//
// Every file is PEM: certificates as CERTIFICATE blocks, keys as PKCS #8
// PRIVATE KEY blocks, written with mode 0600 into the directory given to
// New under the fixed names of the File* constants, so a helper that only
// knows the server certificate's path can find the rest beside it (Load).
package tlstest
