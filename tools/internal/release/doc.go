// Package release holds the tests of the release script, .ci/release (run as
// `make release VERSION=vX.Y.Z`; docs/releasing.md describes it). It has no
// code of its own: the script is bash, and these tests run it against a
// throwaway git repository with the test command and gorelease replaced by
// stubs, so they need git and bash but neither the network nor the real
// test suite.
package release
