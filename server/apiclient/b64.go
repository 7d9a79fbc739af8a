package apiclient

import "encoding/base64"

// encodeB64 encodes b as standard base64 with padding, the contract's
// encoding of byte strings (the same encoding/json uses for []byte).
func encodeB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
