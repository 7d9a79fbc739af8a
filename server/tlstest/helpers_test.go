package tlstest_test

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
)

// tlsLoad parses the first certificate of a PEM file.
func tlsLoad(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	return x509.ParseCertificate(block.Bytes)
}
