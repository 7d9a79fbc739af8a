// Package auth is who may do what on a PyStream server, once for every
// protocol: the auth file (PYSTREAM_AUTH_FILE), the principals it names
// and their credentials, the roles, and the one decision "may this
// principal do X on topic T" (Decide). The HTTP API (server/httpapi)
// asks it with a bearer token; the Kafka listener (server/kafka) with a
// SASL exchange (PLAIN or SCRAM). It lies beneath both protocols and
// imports neither (docs/README.md § The server's packages).
//
// # The auth file
//
// One credential a line:
//
//	# name      role   credential                                                             prefixes (optional)
//	ops         admin  sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
//	billing-app write  sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9 billing.,invoices
//	billing-app write  scram-sha-256:8192:SALT:STOREDKEY:SERVERKEY                            billing.,invoices
//
// Fields are separated by spaces or tabs. A line that is empty or starts
// with '#' is skipped. name is 1 to 64 characters of A-Z a-z 0-9 . _ -;
// it is what logs and error answers call the principal, and its SASL
// user name. role is admin, write or read. prefixes, when present, is a
// comma-separated list of topic-name prefixes that limits the principal
// to those topics.
//
// The credential is one of:
//
//   - sha256:HEX — the 64 lowercase hex digits of the SHA-256 of a bearer
//     token (pystream auth hash prints it). It serves HTTP bearer
//     authentication and SASL/PLAIN.
//   - scram-sha-256:ITERATIONS:SALT:STOREDKEY:SERVERKEY, or
//     scram-sha-512:... — a SCRAM credential (RFC 5802 § 3): the PBKDF2
//     iteration count (4096 to 1,000,000), the salt (16 to 64 bytes),
//     StoredKey and ServerKey (the hash's size each), the last three in
//     standard base64 with padding (pystream auth scram prints the line).
//     It serves SASL/SCRAM of that hash alone.
//
// A name may have one line per kind of credential (so at most three);
// its lines must agree on role and prefixes. No credential may appear
// twice.
//
// The file stores hashes, not tokens: a token is a long random secret (32
// random bytes, say), not a password, so one unsalted SHA-256 is enough
// to keep a copied file from being replayed; a slow password hash would
// only slow every request down. SCRAM's credential is salted and
// iterated because the mechanism requires it, not because the token
// needs it.
//
// The parser is strict: anything else (a fourth field that is not a
// prefix list, an unknown role, a credential of the wrong form, a carriage
// return, a name used twice for one kind of credential, a file with no
// token) is a *FileError naming the line, and the server refuses to
// start.
//
// # Deciding
//
// Each role includes the ones below it: admin ⊇ write ⊇ read. A
// principal limited to prefixes reaches only operations about one named
// topic under one of them; listings and operations on the cluster as a
// whole need a principal without prefixes. Decide is that rule, a pure
// function; each protocol maps its answers to its own errors (401/403
// over HTTP, SASL_AUTHENTICATION_FAILED and the *_AUTHORIZATION_FAILED
// codes over Kafka).
//
// # SASL
//
// Set.NewSASL runs the server side of PLAIN (RFC 4616: the user is the
// principal's name, the password its token, checked against the SHA-256
// in constant time) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677, with
// github.com/xdg-go/scram). An unknown name fails the same way, and at
// the same step, as a wrong token. Channel binding and authorization ids
// other than the user name are not supported.
package auth
