package kafka

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersions answers ApiVersions (key 18) v0-v3: the handler table's
// keys and versions. A newer version never reaches here: conn.handle
// answers it with a v0 UNSUPPORTED_VERSION carrying the same list.
func (s *Server) apiVersions(x *exchange, req kmsg.Request) kmsg.Response {
	return s.apiVersionsResponse(req.GetVersion(), 0)
}

// apiVersionsResponse is the answer at version with errorCode.
func (s *Server) apiVersionsResponse(version, errorCode int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = version
	resp.ErrorCode = errorCode
	for _, a := range s.table() {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = int16(a.key), a.min, a.max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	slices.SortFunc(resp.ApiKeys, func(a, b kmsg.ApiVersionsResponseApiKey) int { return int(a.ApiKey) - int(b.ApiKey) })
	return resp
}

func failApiVersions(req kmsg.Request, code int16) kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = code
	return resp
}
