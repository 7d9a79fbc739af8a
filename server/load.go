package server

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/kelseyhightower/envconfig"
)

// SourceEnvironment is UnknownVariable.Source for a variable found in the
// process environment.
const SourceEnvironment = "environment"

// UnknownVariable is a PYSTREAM_* variable that no configuration field
// reads, usually a typo such as PYSTREAM_LOGLEVEL. The server warns about
// each one at start-up instead of ignoring it silently.
type UnknownVariable struct {
	// Name is the variable as it was written.
	Name string
	// Source is SourceEnvironment or the path of the .env file.
	Source string
	// Suggestion is the known variable it most likely means, or "".
	Suggestion string
}

// Load builds the configuration from environ (KEY=VALUE strings as
// os.Environ returns them) and the .env file at dotenvPath, which may be
// missing ("" means: read no file). The rules:
//
//   - only PYSTREAM_* variables count; HOST, PORT and other unprefixed
//     names are never read;
//   - a variable in environ wins over the same variable in the .env file;
//   - an empty value counts as unset, so the default applies (an empty
//     PYSTREAM_HOST does not mean "every interface");
//   - integers are decimal ("010" is ten) and range-checked;
//   - a rejected value is a *ConfigError naming the variable and what it
//     allows; a malformed .env file is a *DotEnvError naming the line.
//
// PYSTREAM_* variables that no field reads are returned as UnknownVariable
// for the caller to warn about.
//
// envconfig reads only the process environment, so Load shows it the
// resolved PYSTREAM_* variables for the duration of one call and then puts
// the previous values back. Load is safe to call from several goroutines,
// but not while other code changes PYSTREAM_* variables with os.Setenv.
func Load(environ []string, dotenvPath string) (Config, []UnknownVariable, error) {
	vars, err := variables()
	if err != nil {
		return Config{}, nil, err
	}
	known := make([]string, len(vars))
	for i, v := range vars {
		known[i] = v.Name
	}
	var dotenv []dotEnvEntry
	if dotenvPath != "" {
		if dotenv, err = readDotEnv(dotenvPath); err != nil {
			return Config{}, nil, err
		}
	}
	resolved, unknown := resolveEnv(environ, dotenv, dotenvPath, known)

	var cfg Config
	if err := processWith(resolved, known, &cfg); err != nil {
		return Config{}, unknown, err
	}
	if err := cfg.validate(); err != nil {
		return Config{}, unknown, err
	}
	return cfg, unknown, nil
}

// resolveEnv decides the value of every known variable from the two
// sources, and collects the unknown PYSTREAM_* names. It is a pure
// function: Load does the I/O around it.
func resolveEnv(environ []string, dotenv []dotEnvEntry, dotenvPath string, known []string) (map[string]string, []UnknownVariable) {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			env[k] = v
		}
	}
	file := make(map[string]string, len(dotenv))
	for _, e := range dotenv {
		file[e.Key] = e.Value
	}

	resolved := make(map[string]string)
	for _, k := range known {
		if v := env[k]; v != "" {
			resolved[k] = v
		} else if v := file[k]; v != "" {
			resolved[k] = v
		}
	}

	var unknown []UnknownVariable
	collect := func(names map[string]string, source string) {
		for name := range names {
			if !strings.HasPrefix(strings.ToUpper(name), EnvPrefix+"_") || slices.Contains(known, name) {
				continue
			}
			unknown = append(unknown, UnknownVariable{Name: name, Source: source, Suggestion: suggest(name, known)})
		}
	}
	collect(env, SourceEnvironment)
	collect(file, dotenvPath)
	slices.SortFunc(unknown, func(a, b UnknownVariable) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Source, b.Source)
	})
	return resolved, unknown
}

// suggest returns the known variable that name matches once case and
// underscores are ignored (PYSTREAM_LOGLEVEL, pystream_port), or "".
func suggest(name string, known []string) string {
	squash := func(s string) string { return strings.ReplaceAll(strings.ToUpper(s), "_", "") }
	for _, k := range known {
		if squash(k) == squash(name) {
			return k
		}
	}
	return ""
}

// envMu serialises the environment swap in processWith.
var envMu sync.Mutex

// processWith runs envconfig.Process with exactly the resolved values
// visible for the known variables, then restores the environment.
func processWith(resolved map[string]string, known []string, cfg *Config) (err error) {
	envMu.Lock()
	defer envMu.Unlock()

	saved := make(map[string]string)
	for _, k := range known {
		if v, ok := os.LookupEnv(k); ok {
			saved[k] = v
		}
	}
	defer func() {
		for _, k := range known {
			var rerr error
			if v, ok := saved[k]; ok {
				rerr = os.Setenv(k, v)
			} else {
				rerr = os.Unsetenv(k)
			}
			if rerr != nil && err == nil {
				err = fmt.Errorf("server: restore %s: %w", k, rerr)
			}
		}
	}()
	for _, k := range known {
		var serr error
		if v, ok := resolved[k]; ok {
			serr = os.Setenv(k, v)
		} else {
			serr = os.Unsetenv(k)
		}
		if serr != nil {
			return fmt.Errorf("server: set %s: %w", k, serr)
		}
	}

	if err := envconfig.Process(EnvPrefix, cfg); err != nil {
		var pe *envconfig.ParseError
		if errors.As(err, &pe) {
			var ce *ConfigError
			if errors.As(pe.Err, &ce) {
				ce.Var = pe.KeyName
				return ce
			}
			return &ConfigError{Var: pe.KeyName, Value: pe.Value, Allowed: "a value of type " + pe.TypeName, Err: pe.Err}
		}
		return fmt.Errorf("server: read configuration: %w", err)
	}
	return nil
}
