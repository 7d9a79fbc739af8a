package httpapi

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
)

// A topic's configuration over HTTP
// (docs/phase-6-network-api.md § Topic configuration): POST /api/topics takes "config", GET /api/topics/{topic}
// and GET /api/topics/{topic}/config show the effective configuration and
// which keys are the topic's own, PATCH /api/topics/{topic}/config changes
// them. Every value is a JSON string, as Kafka's are; the rule for keys
// and values is package topic's, applied before the cluster is asked, so
// a refused request changes nothing.

// configBadRequest is the 400 of a refused configuration key: it names
// the key, the value and what the key accepts.
func configBadRequest(err error) *apiError {
	var ce *topic.ConfigError
	if !errors.As(err, &ce) {
		return classify(err)
	}
	if ce.Value == "" {
		return badRequest("config %s: %s", quoted(ce.Key), ce.Reason)
	}
	return badRequest("config %s: value %s: %s", quoted(ce.Key), quoted(ce.Value), ce.Reason)
}

// configStrings reads a "config" object whose values must be JSON strings
// (null too when nullOK: the key is then in removed). A number, even one a
// key would accept, is refused naming the key: values are strings, as in
// Kafka, so that no client sends 1e3 or 3600000.0 and has it read.
func configStrings(raw map[string]json.RawMessage, nullOK bool) (set map[string]string, removed []string, ae *apiError) {
	set = map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		v := raw[key]
		if string(v) == "null" {
			if !nullOK {
				return nil, nil, badRequest("config %s: null; each value is a JSON string (PATCH /api/topics/{topic}/config removes a key with null)", quoted(key))
			}
			removed = append(removed, key)
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, nil, badRequest("config %s: %s is not a JSON string; each value is a string, e.g. \"3600000\" (a number written as a string) or \"delete\"", quoted(key), quoted(string(v)))
		}
		set[key] = s
	}
	return set, removed, nil
}

// topicConfigView is a topic's effective configuration and its overrides'
// keys, sorted.
func (a *API) topicConfigView(name string) (map[string]string, []string, *apiError) {
	overrides, err := a.admin.TopicConfigOverrides(name)
	if err != nil {
		return nil, nil, classify(err)
	}
	effective, err := a.admin.TopicConfig(name)
	if err != nil {
		return nil, nil, classify(err)
	}
	keys := slices.Sorted(maps.Keys(overrides))
	if keys == nil {
		keys = []string{}
	}
	return effective.Strings(), keys, nil
}

// handleTopicConfig answers GET /api/topics/{topic}/config.
func (a *API) handleTopicConfig(w http.ResponseWriter, r *http.Request) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	config, keys, ae := a.topicConfigView(name)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	writeJSON(w, http.StatusOK, apiclient.TopicConfigResponse{Topic: name, Config: config, ConfigOverrides: keys})
}

// handleAlterTopicConfig answers PATCH /api/topics/{topic}/config: a JSON
// object whose string values set keys and whose nulls remove them,
// checked as a whole (one bad key: 400, nothing changes); 404 for an
// unknown topic; 200 with the new effective configuration.
func (a *API) handleAlterTopicConfig(w http.ResponseWriter, r *http.Request) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	var body map[string]json.RawMessage
	if ae := a.readJSON(w, r, &body); ae != nil {
		writeAPIError(w, ae)
		return
	}
	if body == nil {
		writeAPIError(w, badRequest("the body must be a JSON object of configuration keys"))
		return
	}
	set, removed, ae := configStrings(body, true)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	// The keys and values alone are checked here, so that a bad request
	// is a 400 naming the key even for a topic that does not exist.
	if _, err := topic.AlterConfigOverrides(nil, set, removed); err != nil {
		writeAPIError(w, configBadRequest(err))
		return
	}
	if _, err := a.admin.AlterTopicConfig(name, set, removed); err != nil {
		if errors.Is(err, topic.ErrInvalidConfig) {
			writeAPIError(w, configBadRequest(err))
			return
		}
		writeAPIError(w, a.withUnavailable(classify(err)))
		return
	}
	a.logger.Info("topic config altered", "topic", name, "set", set, "removed", removed)
	config, keys, ae := a.topicConfigView(name)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	writeJSON(w, http.StatusOK, apiclient.TopicConfigResponse{Topic: name, Config: config, ConfigOverrides: keys})
}
