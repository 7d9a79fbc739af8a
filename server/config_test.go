package server

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/topic"
)

// withDefaults returns Defaults() changed by edit.
func withDefaults(edit func(*Config)) Config {
	c := Defaults()
	if edit != nil {
		edit(&c)
	}
	return c
}

// writeDotEnv writes a .env file with the given content into a new
// directory and returns its path.
func writeDotEnv(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".env")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// ../README.md § Configuration: with nothing set, the server runs as pystream
// on 127.0.0.1:8000 at level INFO.
func TestConfigDefaults(t *testing.T) {
	cfg, unknown, err := Load(nil, "")
	require.NoError(t, err)
	require.Empty(t, unknown)
	require.Equal(t, Defaults(), cfg)
	require.Equal(t, "127.0.0.1:8000", cfg.Addr())
	require.Equal(t, "INFO", cfg.LogLevel.String())
}

// The defaults in the struct tags (what envconfig and the usage table use)
// and Defaults() are the same values.
func TestConfigDefaultsMatchTags(t *testing.T) {
	want := map[string]string{}
	d := Defaults()
	want["PYSTREAM_APP_NAME"] = d.AppName
	want["PYSTREAM_HOST"] = d.Host
	want["PYSTREAM_PORT"] = strconv.Itoa(int(d.Port))
	want["PYSTREAM_KAFKA_PORT"] = strconv.Itoa(int(d.KafkaPort))
	want["PYSTREAM_KAFKA_ADVERTISED_HOST"] = ""
	want["PYSTREAM_GROUP_INITIAL_DELAY"] = d.GroupInitialDelay.String()
	want["PYSTREAM_GROUP_MIN_SESSION_TIMEOUT"] = d.GroupMinSessionTimeout.String()
	want["PYSTREAM_LOG_LEVEL"] = d.LogLevel.String()
	want["PYSTREAM_LOG_FORMAT"] = string(d.LogFormat)
	want["PYSTREAM_DATA_DIR"] = d.DataDir
	want["PYSTREAM_BROKERS"] = strconv.Itoa(int(d.Brokers))
	want["PYSTREAM_MAX_REQUEST_BYTES"] = strconv.Itoa(int(d.MaxRequestBytes))
	want["PYSTREAM_MAX_REQUEST_RECORDS"] = strconv.Itoa(int(d.MaxRequestRecords))
	want["PYSTREAM_MAX_INFLIGHT_BYTES"] = strconv.Itoa(int(d.MaxInflightBytes))
	want["PYSTREAM_FETCH_MAX_BYTES"] = strconv.Itoa(int(d.FetchMaxBytes))
	want["PYSTREAM_FAILOVER_AFTER"] = d.FailoverAfter.String()
	want["PYSTREAM_LEADER_REBALANCE"] = d.LeaderRebalance.String()
	want["PYSTREAM_SHARED_SYNC"] = d.SharedSync.String()
	want["PYSTREAM_RETENTION_CHECK_INTERVAL"] = d.RetentionCheckInterval.String()
	want["PYSTREAM_GROUP_SESSION_TIMEOUT"] = d.GroupSessionTimeout.String()
	want["PYSTREAM_GROUP_HEARTBEAT_INTERVAL"] = d.GroupHeartbeatInterval.String()
	want["PYSTREAM_TLS_CERT"] = ""
	want["PYSTREAM_TLS_KEY"] = ""
	want["PYSTREAM_TLS_CLIENT_CA"] = ""
	want["PYSTREAM_CLUSTER_TLS_CERT"] = ""
	want["PYSTREAM_CLUSTER_TLS_KEY"] = ""
	want["PYSTREAM_CLUSTER_TLS_CA"] = ""
	want["PYSTREAM_AUTH_FILE"] = d.AuthFile
	want["PYSTREAM_INSECURE"] = d.Insecure.String()
	want["PYSTREAM_ALLOWED_ORIGINS"] = ""
	want["PYSTREAM_ALLOWED_HOSTS"] = ""
	want["PYSTREAM_MAX_OPEN_LOGS"] = strconv.Itoa(int(d.MaxOpenLogs))
	want["PYSTREAM_NODE_ID"] = ""
	want["PYSTREAM_CLUSTER"] = ""
	want["PYSTREAM_INTERNAL_ROUTES"] = ""
	want["PYSTREAM_JOIN"] = d.Join.String()
	for name, v := range d.TopicDefaults().Strings() {
		if name == topic.MinInsyncReplicasKey || name == topic.CleanupPolicyKey ||
			name == topic.MaxMessageBytesKey || name == topic.MessageTimestampTypeKey {
			continue // server-wide at their defaults: no variable sets them
		}
		want["PYSTREAM_"+strings.ToUpper(strings.ReplaceAll(name, ".", "_"))] = v
	}
	got := map[string]string{}
	for _, v := range Variables() {
		got[v.Name] = v.Default
		require.NotEmpty(t, v.Description, v.Name)
	}
	require.Equal(t, want, got)
}

func TestConfigOverrides(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want Config
	}{
		{"app name", []string{"PYSTREAM_APP_NAME=orders-api"}, withDefaults(func(c *Config) { c.AppName = "orders-api" })},
		{"host ipv4", []string{"PYSTREAM_HOST=0.0.0.0"}, withDefaults(func(c *Config) { c.Host = "0.0.0.0" })},
		{"host ipv6", []string{"PYSTREAM_HOST=::1"}, withDefaults(func(c *Config) { c.Host = "::1" })},
		{"host name", []string{"PYSTREAM_HOST=localhost"}, withDefaults(func(c *Config) { c.Host = "localhost" })},
		{"port", []string{"PYSTREAM_PORT=9000"}, withDefaults(func(c *Config) { c.Port = 9000 })},
		{"lowest port", []string{"PYSTREAM_PORT=1"}, withDefaults(func(c *Config) { c.Port = 1 })},
		{"highest port", []string{"PYSTREAM_PORT=65535"}, withDefaults(func(c *Config) { c.Port = 65535 })},
		// envconfig alone reads integers in base 0, where 010 is 8.
		{"leading zero is decimal", []string{"PYSTREAM_PORT=010"}, withDefaults(func(c *Config) { c.Port = 10 })},
		{"kafka off", []string{"PYSTREAM_KAFKA_PORT=0"}, withDefaults(func(c *Config) { c.KafkaPort = 0 })},
		{"group timings", []string{"PYSTREAM_GROUP_INITIAL_DELAY=3s", "PYSTREAM_GROUP_MIN_SESSION_TIMEOUT=100ms"},
			withDefaults(func(c *Config) {
				c.GroupInitialDelay, c.GroupMinSessionTimeout = GroupDelay(3*time.Second), GroupSessionTimeout(100*time.Millisecond)
			})},
		{"kafka port and advertised host", []string{"PYSTREAM_KAFKA_PORT=19092", "PYSTREAM_KAFKA_ADVERTISED_HOST=broker.example"},
			withDefaults(func(c *Config) { c.KafkaPort, c.KafkaAdvertisedHost = 19092, "broker.example" })},
		// Without split_words envconfig would read PYSTREAM_LOGLEVEL instead.
		{"log level via split words", []string{"PYSTREAM_LOG_LEVEL=DEBUG"}, withDefaults(func(c *Config) { c.LogLevel = LogLevel(LevelDebug) })},
		{"log level warning lower case", []string{"PYSTREAM_LOG_LEVEL=warning"}, withDefaults(func(c *Config) { c.LogLevel = LogLevel(LevelWarning) })},
		{"log level WARN", []string{"PYSTREAM_LOG_LEVEL=WARN"}, withDefaults(func(c *Config) { c.LogLevel = LogLevel(LevelWarning) })},
		{"log level critical", []string{"PYSTREAM_LOG_LEVEL=Critical"}, withDefaults(func(c *Config) { c.LogLevel = LogLevel(LevelCritical) })},
		{"log format json", []string{"PYSTREAM_LOG_FORMAT=JSON"}, withDefaults(func(c *Config) { c.LogFormat = FormatJSON })},
		{"data dir", []string{"PYSTREAM_DATA_DIR=/var/lib/pystream"}, withDefaults(func(c *Config) { c.DataDir = "/var/lib/pystream" })},
		{"brokers", []string{"PYSTREAM_BROKERS=5"}, withDefaults(func(c *Config) { c.Brokers = 5 })},
		{"max request bytes", []string{"PYSTREAM_MAX_REQUEST_BYTES=4096"}, withDefaults(func(c *Config) { c.MaxRequestBytes = 4096 })},
		{"max open logs", []string{"PYSTREAM_MAX_OPEN_LOGS=5000"}, withDefaults(func(c *Config) { c.MaxOpenLogs = 5000 })},
		{"derived max open logs", []string{"PYSTREAM_MAX_OPEN_LOGS=0"}, withDefaults(func(c *Config) { c.MaxOpenLogs = 0 })},
		{"smallest max request bytes", []string{"PYSTREAM_MAX_REQUEST_BYTES=1024"}, withDefaults(func(c *Config) { c.MaxRequestBytes = 1024 })},
		{"largest max request bytes", []string{"PYSTREAM_MAX_REQUEST_BYTES=1073741824", "PYSTREAM_MAX_INFLIGHT_BYTES=1073741824"},
			withDefaults(func(c *Config) { c.MaxRequestBytes, c.MaxInflightBytes = 1<<30, 1<<30 })},
		{"failover after", []string{"PYSTREAM_FAILOVER_AFTER=500ms"}, withDefaults(func(c *Config) { c.FailoverAfter = FailoverDelay(500 * time.Millisecond) })},
		{"failover never", []string{"PYSTREAM_FAILOVER_AFTER=0"}, withDefaults(func(c *Config) { c.FailoverAfter = 0 })},
		{"failover longest", []string{"PYSTREAM_FAILOVER_AFTER=1h"}, withDefaults(func(c *Config) { c.FailoverAfter = FailoverDelay(time.Hour) })},
		{"rebalance off", []string{"PYSTREAM_LEADER_REBALANCE=off"}, withDefaults(func(c *Config) { c.LeaderRebalance = false })},
		{"rebalance FALSE", []string{"PYSTREAM_LEADER_REBALANCE=FALSE"}, withDefaults(func(c *Config) { c.LeaderRebalance = false })},
		{"shared sync off", []string{"PYSTREAM_SHARED_SYNC=off"}, withDefaults(func(c *Config) { c.SharedSync = SyncOwnFile })},
		{"shared sync of the file system", []string{"PYSTREAM_SHARED_SYNC=syncfs"}, withDefaults(func(c *Config) { c.SharedSync = SyncFileSystem })},
		{"shared sync on is the journal", []string{"PYSTREAM_SHARED_SYNC=on"}, withDefaults(func(c *Config) { c.SharedSync = SyncJournal })},
		{"rebalance on", []string{"PYSTREAM_LEADER_REBALANCE=on"}, Defaults()},
		{"group timeouts", []string{"PYSTREAM_GROUP_SESSION_TIMEOUT=1s", "PYSTREAM_GROUP_HEARTBEAT_INTERVAL=100ms"},
			withDefaults(func(c *Config) {
				c.GroupSessionTimeout, c.GroupHeartbeatInterval = GroupTimeout(time.Second), GroupTimeout(100*time.Millisecond)
			})},
		// The topic defaults follow the topic layer's rule for their key.
		{"retention for ever", []string{"PYSTREAM_RETENTION_MS=-1"}, withDefaults(func(c *Config) { c.RetentionMs = -1 })},
		{"retention zero", []string{"PYSTREAM_RETENTION_MS=0"}, withDefaults(func(c *Config) { c.RetentionMs = 0 })},
		{"retention bytes", []string{"PYSTREAM_RETENTION_BYTES=1073741824"}, withDefaults(func(c *Config) { c.RetentionBytes = 1 << 30 })},
		{"smallest segment", []string{"PYSTREAM_SEGMENT_BYTES=1024"}, withDefaults(func(c *Config) { c.SegmentBytes = 1024 })},
		{"largest segment", []string{"PYSTREAM_SEGMENT_BYTES=1073741824"}, withDefaults(func(c *Config) { c.SegmentBytes = 1 << 30 })},
		{"segment ms", []string{"PYSTREAM_SEGMENT_MS=1"}, withDefaults(func(c *Config) { c.SegmentMs = 1 })},
		// Unprefixed names are never read: envconfig:"HOST"-style tags
		// would fall back to them.
		{"unprefixed names ignored", []string{"HOST=0.0.0.0", "PORT=9999", "APP_NAME=x", "LOG_LEVEL=ERROR", "BROKERS=7"}, Defaults()},
		// A set-but-empty variable means the default, never "" or 0
		// (an empty host would bind every interface).
		{"empty values mean default", []string{
			"PYSTREAM_APP_NAME=", "PYSTREAM_HOST=", "PYSTREAM_PORT=", "PYSTREAM_LOG_LEVEL=",
			"PYSTREAM_LOG_FORMAT=", "PYSTREAM_DATA_DIR=", "PYSTREAM_BROKERS=", "PYSTREAM_MAX_REQUEST_BYTES=",
			"PYSTREAM_FAILOVER_AFTER=", "PYSTREAM_LEADER_REBALANCE=",
			"PYSTREAM_TLS_CERT=", "PYSTREAM_TLS_KEY=", "PYSTREAM_TLS_CLIENT_CA=",
			"PYSTREAM_MAX_REQUEST_RECORDS=", "PYSTREAM_MAX_INFLIGHT_BYTES=", "PYSTREAM_FETCH_MAX_BYTES=",
			"PYSTREAM_RETENTION_MS=", "PYSTREAM_RETENTION_BYTES=", "PYSTREAM_SEGMENT_BYTES=", "PYSTREAM_SEGMENT_MS=",
		}, Defaults()},
		// Load checks only that the TLS variables come together; TLSConfig
		// reads the files.
		{"tls", []string{"PYSTREAM_TLS_CERT=c.pem", "PYSTREAM_TLS_KEY=k.pem"},
			withDefaults(func(c *Config) { c.TLSCert = "c.pem"; c.TLSKey = "k.pem" })},
		{"mutual tls", []string{"PYSTREAM_TLS_CERT=c.pem", "PYSTREAM_TLS_KEY=k.pem", "PYSTREAM_TLS_CLIENT_CA=ca.pem"},
			withDefaults(func(c *Config) { c.TLSCert = "c.pem"; c.TLSKey = "k.pem"; c.TLSClientCA = "ca.pem" })},
		{"everything", []string{
			"PYSTREAM_APP_NAME=a", "PYSTREAM_HOST=10.0.0.1", "PYSTREAM_PORT=8080", "PYSTREAM_LOG_LEVEL=error",
			"PYSTREAM_LOG_FORMAT=text", "PYSTREAM_DATA_DIR=d", "PYSTREAM_BROKERS=64", "PYSTREAM_MAX_REQUEST_BYTES=2048",
			"PYSTREAM_FAILOVER_AFTER=2s", "PYSTREAM_LEADER_REBALANCE=off", "PYSTREAM_RETENTION_CHECK_INTERVAL=30s",
			"PYSTREAM_MAX_REQUEST_RECORDS=5", "PYSTREAM_MAX_INFLIGHT_BYTES=1048576", "PYSTREAM_FETCH_MAX_BYTES=1024",
			"PYSTREAM_RETENTION_MS=3600000", "PYSTREAM_RETENTION_BYTES=1048576", "PYSTREAM_SEGMENT_BYTES=65536", "PYSTREAM_SEGMENT_MS=60000",
			"PYSTREAM_KAFKA_PORT=19092", "PYSTREAM_KAFKA_ADVERTISED_HOST=kafka.example",
		}, Config{AppName: "a", Host: "10.0.0.1", Port: 8080, KafkaPort: 19092, KafkaAdvertisedHost: "kafka.example", LogLevel: LogLevel(LevelError), LogFormat: FormatText, DataDir: "d", Brokers: 64, MaxRequestBytes: 2048,
			MaxRequestRecords: 5, MaxInflightBytes: 1 << 20, FetchMaxBytes: 1024,
			FailoverAfter: FailoverDelay(2 * time.Second), RetentionMs: 3600000, RetentionBytes: 1 << 20, SegmentBytes: 65536, SegmentMs: 60000,
			RetentionCheckInterval: CheckInterval(30 * time.Second), GroupMinSessionTimeout: GroupSessionTimeout(6 * time.Second),
			GroupSessionTimeout: GroupTimeout(45 * time.Second), GroupHeartbeatInterval: GroupTimeout(5 * time.Second), SharedSync: SyncJournal}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, unknown, err := Load(tt.env, "")
			require.NoError(t, err)
			require.Empty(t, unknown)
			require.Equal(t, tt.want, cfg)
		})
	}
}

func TestConfigInvalid(t *testing.T) {
	tests := []struct {
		env     string
		wantVar string
	}{
		{"PYSTREAM_PORT=abc", "PYSTREAM_PORT"},
		// A body larger than the in-flight budget could never be admitted.
		{"PYSTREAM_MAX_REQUEST_BYTES=536870912", "PYSTREAM_MAX_REQUEST_BYTES"},
		{"PYSTREAM_PORT=0", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT=65536", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT=-1", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT=+80", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT=0x1F", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT=0o17", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT=8_000", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT=8e3", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT= 8000", "PYSTREAM_PORT"},
		{"PYSTREAM_PORT=99999999999999999999", "PYSTREAM_PORT"},
		{"PYSTREAM_LOG_LEVEL=verbose", "PYSTREAM_LOG_LEVEL"},
		{"PYSTREAM_LOG_LEVEL=5", "PYSTREAM_LOG_LEVEL"},
		{"PYSTREAM_LOG_LEVEL=INFO+1", "PYSTREAM_LOG_LEVEL"},
		{"PYSTREAM_LOG_FORMAT=xml", "PYSTREAM_LOG_FORMAT"},
		{"PYSTREAM_HOST=not a host", "PYSTREAM_HOST"},
		{"PYSTREAM_HOST=-bad.example", "PYSTREAM_HOST"},
		{"PYSTREAM_HOST=a..b", "PYSTREAM_HOST"},
		{"PYSTREAM_APP_NAME= padded", "PYSTREAM_APP_NAME"},
		{"PYSTREAM_APP_NAME=tab\there", "PYSTREAM_APP_NAME"},
		{"PYSTREAM_BROKERS=0", "PYSTREAM_BROKERS"},
		{"PYSTREAM_KAFKA_PORT=65536", "PYSTREAM_KAFKA_PORT"},
		{"PYSTREAM_KAFKA_PORT=65535", "PYSTREAM_KAFKA_PORT"}, // broker 3 would be on 65537
		{"PYSTREAM_KAFKA_ADVERTISED_HOST=a b", "PYSTREAM_KAFKA_ADVERTISED_HOST"},
		{"PYSTREAM_GROUP_INITIAL_DELAY=3", "PYSTREAM_GROUP_INITIAL_DELAY"},
		{"PYSTREAM_GROUP_INITIAL_DELAY=-1s", "PYSTREAM_GROUP_INITIAL_DELAY"},
		{"PYSTREAM_GROUP_INITIAL_DELAY=6m", "PYSTREAM_GROUP_INITIAL_DELAY"},
		{"PYSTREAM_GROUP_MIN_SESSION_TIMEOUT=0s", "PYSTREAM_GROUP_MIN_SESSION_TIMEOUT"},
		{"PYSTREAM_GROUP_MIN_SESSION_TIMEOUT=6", "PYSTREAM_GROUP_MIN_SESSION_TIMEOUT"},
		{"PYSTREAM_GROUP_MIN_SESSION_TIMEOUT=31m", "PYSTREAM_GROUP_MIN_SESSION_TIMEOUT"},
		{"PYSTREAM_FAILOVER_AFTER=3", "PYSTREAM_FAILOVER_AFTER"},
		{"PYSTREAM_FAILOVER_AFTER=-1s", "PYSTREAM_FAILOVER_AFTER"},
		{"PYSTREAM_FAILOVER_AFTER=2h", "PYSTREAM_FAILOVER_AFTER"},
		{"PYSTREAM_FAILOVER_AFTER=soon", "PYSTREAM_FAILOVER_AFTER"},
		{"PYSTREAM_LEADER_REBALANCE=maybe", "PYSTREAM_LEADER_REBALANCE"},
		{"PYSTREAM_RETENTION_CHECK_INTERVAL=10ms", "PYSTREAM_RETENTION_CHECK_INTERVAL"},
		{"PYSTREAM_RETENTION_CHECK_INTERVAL=5", "PYSTREAM_RETENTION_CHECK_INTERVAL"},
		{"PYSTREAM_GROUP_SESSION_TIMEOUT=5ms", "PYSTREAM_GROUP_SESSION_TIMEOUT"},
		{"PYSTREAM_GROUP_SESSION_TIMEOUT=45", "PYSTREAM_GROUP_SESSION_TIMEOUT"},
		{"PYSTREAM_GROUP_HEARTBEAT_INTERVAL=2h", "PYSTREAM_GROUP_HEARTBEAT_INTERVAL"},
		// A member would time out between two heartbeats.
		{"PYSTREAM_GROUP_HEARTBEAT_INTERVAL=45s", "PYSTREAM_GROUP_HEARTBEAT_INTERVAL"},
		{"PYSTREAM_MAX_OPEN_LOGS=-1", "PYSTREAM_MAX_OPEN_LOGS"},
		{"PYSTREAM_MAX_OPEN_LOGS=16777217", "PYSTREAM_MAX_OPEN_LOGS"},
		{"PYSTREAM_BROKERS=65", "PYSTREAM_BROKERS"},
		{"PYSTREAM_BROKERS=three", "PYSTREAM_BROKERS"},
		{"PYSTREAM_TLS_CLIENT_CA=ca.pem", "PYSTREAM_TLS_CLIENT_CA"},
		{"PYSTREAM_RETENTION_MS=-2", "PYSTREAM_RETENTION_MS"},
		{"PYSTREAM_RETENTION_MS=+5", "PYSTREAM_RETENTION_MS"},
		{"PYSTREAM_RETENTION_MS=1h", "PYSTREAM_RETENTION_MS"},
		{"PYSTREAM_RETENTION_BYTES=-5", "PYSTREAM_RETENTION_BYTES"},
		{"PYSTREAM_RETENTION_BYTES=1 000", "PYSTREAM_RETENTION_BYTES"},
		{"PYSTREAM_SEGMENT_BYTES=1023", "PYSTREAM_SEGMENT_BYTES"},
		{"PYSTREAM_SEGMENT_BYTES=1073741825", "PYSTREAM_SEGMENT_BYTES"},
		{"PYSTREAM_SEGMENT_MS=0", "PYSTREAM_SEGMENT_MS"},
		{"PYSTREAM_SEGMENT_MS=9223372036854775808", "PYSTREAM_SEGMENT_MS"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			_, _, err := Load([]string{tt.env}, "")
			require.ErrorIs(t, err, ErrInvalidConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tt.wantVar, ce.Var)
			require.Equal(t, strings.SplitN(tt.env, "=", 2)[1], ce.Value)
			require.NotEmpty(t, ce.Allowed)
		})
	}
}

// The configuration a user sees in the usage table of an invalid port names
// the range.
func TestConfigInvalidPortSaysRange(t *testing.T) {
	_, _, err := Load([]string{"PYSTREAM_PORT=abc"}, "")
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "a decimal integer from 1 to 65535", ce.Allowed)
	var ne *strconv.NumError
	require.ErrorAs(t, err, &ne, "the cause is kept")
}

// docs/phase-0-foundation.md § Configuration and envconfig's traps: a .env
// file in the working directory is read, and the real environment wins over
// it.
func TestConfigDotEnvPrecedence(t *testing.T) {
	tests := []struct {
		name   string
		dotenv string // "" means no file
		env    []string
		want   Config
	}{
		{"no file", "", nil, Defaults()},
		{"file only", "PYSTREAM_PORT=9001\nPYSTREAM_APP_NAME=from-file\n", nil,
			withDefaults(func(c *Config) { c.Port = 9001; c.AppName = "from-file" })},
		{"environment wins", "PYSTREAM_PORT=9001\n", []string{"PYSTREAM_PORT=9002"},
			withDefaults(func(c *Config) { c.Port = 9002 })},
		{"environment and file combine", "PYSTREAM_PORT=9001\n", []string{"PYSTREAM_APP_NAME=env"},
			withDefaults(func(c *Config) { c.Port = 9001; c.AppName = "env" })},
		// Empty means unset, in either source.
		{"empty environment value lets the file decide", "PYSTREAM_PORT=9001\n", []string{"PYSTREAM_PORT="},
			withDefaults(func(c *Config) { c.Port = 9001 })},
		{"empty file value means default", "PYSTREAM_HOST=\n", nil, Defaults()},
		{"quotes and comments", "# settings\nexport PYSTREAM_APP_NAME=\"my app\" # quoted\nPYSTREAM_LOG_LEVEL='warning'\n", nil,
			withDefaults(func(c *Config) { c.AppName = "my app"; c.LogLevel = LogLevel(LevelWarning) })},
		{"unprefixed lines ignored", "HOST=0.0.0.0\nPORT=1\n", nil, Defaults()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".env") // missing unless written
			if tt.dotenv != "" {
				path = writeDotEnv(t, tt.dotenv)
			}
			cfg, unknown, err := Load(tt.env, path)
			require.NoError(t, err)
			require.Empty(t, unknown)
			require.Equal(t, tt.want, cfg)
		})
	}
}

func TestConfigDotEnvInvalidValue(t *testing.T) {
	path := writeDotEnv(t, "PYSTREAM_PORT=70000\n")
	_, _, err := Load(nil, path)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "PYSTREAM_PORT", ce.Var)

	// The environment wins, so a bad file value it overrides is harmless.
	cfg, _, err := Load([]string{"PYSTREAM_PORT=8001"}, path)
	require.NoError(t, err)
	require.Equal(t, Port(8001), cfg.Port)
}

func TestConfigDotEnvMalformed(t *testing.T) {
	path := writeDotEnv(t, "PYSTREAM_PORT=9000\nthis is not an assignment\n")
	_, _, err := Load(nil, path)
	require.ErrorIs(t, err, ErrMalformedDotEnv)
	var de *DotEnvError
	require.ErrorAs(t, err, &de)
	require.Equal(t, path, de.Path)
	require.Equal(t, 2, de.Line)
}

func TestConfigDotEnvUnreadable(t *testing.T) {
	dir := t.TempDir() // a directory where the file should be
	_, _, err := Load(nil, dir)
	require.Error(t, err)
}

// docs/phase-0-foundation.md § Configuration and envconfig's traps: an
// unknown PYSTREAM_* variable is reported so that the server can warn about
// it, with the variable it probably means.
func TestConfigUnknownVariables(t *testing.T) {
	path := writeDotEnv(t, "PYSTREAM_APPNAME=x\nPYSTREAM_COLOR=blue\nOTHER=1\n")
	env := []string{"PYSTREAM_LOGLEVEL=DEBUG", "pystream_port=1", "PATH=/bin", "=C:=C:\\"}
	cfg, unknown, err := Load(env, path)
	require.NoError(t, err)
	// PYSTREAM_LOGLEVEL is not PYSTREAM_LOG_LEVEL: it changes nothing.
	require.Equal(t, Defaults(), cfg)
	require.Equal(t, []UnknownVariable{
		{Name: "PYSTREAM_APPNAME", Source: path, Suggestion: "PYSTREAM_APP_NAME"},
		{Name: "PYSTREAM_COLOR", Source: path},
		{Name: "PYSTREAM_LOGLEVEL", Source: SourceEnvironment, Suggestion: "PYSTREAM_LOG_LEVEL"},
		{Name: "pystream_port", Source: SourceEnvironment, Suggestion: "PYSTREAM_PORT"},
	}, unknown)
}

// Load reads the values it is given, not whatever the process environment
// holds, and leaves the process environment as it was.
func TestConfigProcessEnvironmentUntouched(t *testing.T) {
	t.Setenv("PYSTREAM_PORT", "1234")
	t.Setenv("PYSTREAM_APP_NAME", "")
	require.NoError(t, os.Unsetenv("PYSTREAM_APP_NAME"))

	cfg, _, err := Load([]string{"PYSTREAM_APP_NAME=given"}, "")
	require.NoError(t, err)
	require.Equal(t, Port(8000), cfg.Port, "the process value is not part of environ")
	require.Equal(t, "given", cfg.AppName)

	v, ok := os.LookupEnv("PYSTREAM_PORT")
	require.True(t, ok)
	require.Equal(t, "1234", v)
	_, ok = os.LookupEnv("PYSTREAM_APP_NAME")
	require.False(t, ok)
}

func TestConfigUsageListsEveryVariable(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Usage(&b))
	for _, v := range Variables() {
		require.Contains(t, b.String(), v.Name)
		require.Contains(t, b.String(), v.Description)
	}
	require.Len(t, Variables(), reflect.TypeFor[Config]().NumField())
}

// README.md and .env.example document every variable with its default, so
// they cannot fall behind the Config struct.
func TestConfigDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	example, err := os.ReadFile(filepath.Join("..", ".env.example"))
	require.NoError(t, err)
	for _, v := range Variables() {
		def := "`" + v.Default + "`"
		if v.Default == "" {
			def = "(none)" // `` does not render
		}
		require.Contains(t, string(readme), "| `"+v.Name+"` | "+def+" |", "README.md row for %s", v.Name)
		require.Contains(t, string(example), v.Name+"="+v.Default, ".env.example line for %s", v.Name)
	}
	// The example file itself is valid and, used as .env, gives the defaults.
	cfg, unknown, err := Load(nil, filepath.Join("..", ".env.example"))
	require.NoError(t, err)
	require.Empty(t, unknown)
	require.Equal(t, Defaults(), cfg)
}

func TestConfigErrorMessage(t *testing.T) {
	err := error(&ConfigError{Var: "PYSTREAM_PORT", Value: "abc", Allowed: "a decimal integer from 1 to 65535"})
	require.True(t, errors.Is(err, ErrInvalidConfig))
	require.Contains(t, err.Error(), "PYSTREAM_PORT")
}

// PYSTREAM_ALLOWED_ORIGINS and PYSTREAM_ALLOWED_HOSTS: origins are
// scheme://host[:port], hosts names without port or *, both in lower case.
func TestBrowserConfigLists(t *testing.T) {
	var o OriginList
	require.NoError(t, o.Decode("https://App.example.com, http://localhost:3000"))
	require.Equal(t, OriginList{"https://app.example.com", "http://localhost:3000"}, o)
	for _, bad := range []string{"app.example.com", "ftp://x", "https://x/path", "https://u@x", ""} {
		require.Error(t, o.Decode(bad), bad)
	}
	var h HostList
	require.NoError(t, h.Decode("Pystream.internal, *"))
	require.Equal(t, HostList{"pystream.internal", "*"}, h)
	for _, bad := range []string{"a:80", "not a host", ""} {
		require.Error(t, h.Decode(bad), bad)
	}
	cfg, _, err := Load([]string{"PYSTREAM_ALLOWED_ORIGINS=https://a.example", "PYSTREAM_ALLOWED_HOSTS=b.example"}, "")
	require.NoError(t, err)
	require.Equal(t, OriginList{"https://a.example"}, cfg.AllowedOrigins)
	require.Equal(t, HostList{"b.example"}, cfg.AllowedHosts)
}

// TestConfigBoundTagsMatchConstants: a struct tag must be a literal, so
// the defaults written in Config's tags are checked against the constants
// of server/bounds they repeat.
func TestConfigBoundTagsMatchConstants(t *testing.T) {
	field, ok := reflect.TypeFor[Config]().FieldByName("MaxRequestRecords")
	if !ok {
		t.Fatal("Config.MaxRequestRecords is gone")
	}
	if got, want := field.Tag.Get("default"), strconv.Itoa(bounds.DefaultMaxRequestRecords); got != want {
		t.Errorf("MaxRequestRecords default tag %q, bounds.DefaultMaxRequestRecords %s", got, want)
	}
	if want := "1 to " + strconv.Itoa(bounds.MaxRequestRecordsLimit); !strings.HasSuffix(field.Tag.Get("desc"), want) {
		t.Errorf("MaxRequestRecords desc tag %q, want it to end %q", field.Tag.Get("desc"), want)
	}
}
