package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"companydocs/httpapi"
)

// defaultDataDir is the data directory of every command unless --data-dir
// (COMPANYDOCS_DATA_DIR) names another.
const defaultDataDir = "./var"

// envPrefix prefixes every environment variable the binary reads.
const envPrefix = "COMPANYDOCS_"

// flagSet wraps flag.FlagSet so that every flag can also be set by an
// environment variable: flags win, then COMPANYDOCS_<NAME>, then defaults.
// Asked-for help (-h, --help) goes to stdout; a bad flag's line and the
// usage after it go to stderr.
type flagSet struct {
	*flag.FlagSet
	// Synopsis is printed above the flags: the command's usage lines.
	Synopsis       string
	stdout, stderr io.Writer
	envErr         error
}

func newFlagSet(name string, stdout, stderr io.Writer) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), stdout: stdout, stderr: stderr,
		Synopsis: "usage: companydocs " + name + " [flags]"}
	fs.SetOutput(stderr)
	// The flag package calls Usage both for -h and after a bad flag; parse
	// prints it instead, on the stream that fits.
	fs.Usage = func() {}
	return fs
}

// printUsage writes the synopsis and the flags to w.
func (fs *flagSet) printUsage(w io.Writer) {
	fmt.Fprintln(w, strings.TrimRight(fs.Synopsis, "\n"))
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(fs.stderr)
}

// envName maps a flag name to its environment variable: data-dir ->
// COMPANYDOCS_DATA_DIR.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (fs *flagSet) env(name string) (string, bool) {
	return os.LookupEnv(envName(name))
}

func (fs *flagSet) String(p *string, name, def, usage string) {
	if v, ok := fs.env(name); ok {
		def = v
	}
	fs.StringVar(p, name, def, usage+" (env "+envName(name)+")")
}

func (fs *flagSet) Bool(p *bool, name string, def bool, usage string) {
	if v, ok := fs.env(name); ok {
		b, err := strconv.ParseBool(v)
		fs.note(name, v, err)
		def = b || (err != nil && def)
	}
	fs.BoolVar(p, name, def, usage+" (env "+envName(name)+")")
}

func (fs *flagSet) Int(p *int, name string, def int, usage string) {
	if v, ok := fs.env(name); ok {
		n, err := strconv.Atoi(v)
		fs.note(name, v, err)
		if err == nil {
			def = n
		}
	}
	fs.IntVar(p, name, def, usage+" (env "+envName(name)+")")
}

func (fs *flagSet) Int64(p *int64, name string, def int64, usage string) {
	if v, ok := fs.env(name); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		fs.note(name, v, err)
		if err == nil {
			def = n
		}
	}
	fs.Int64Var(p, name, def, usage+" (env "+envName(name)+")")
}

func (fs *flagSet) Float(p *float64, name string, def float64, usage string) {
	if v, ok := fs.env(name); ok {
		f, err := strconv.ParseFloat(v, 64)
		fs.note(name, v, err)
		if err == nil {
			def = f
		}
	}
	fs.Float64Var(p, name, def, usage+" (env "+envName(name)+")")
}

func (fs *flagSet) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	if v, ok := fs.env(name); ok {
		d, err := time.ParseDuration(v)
		fs.note(name, v, err)
		if err == nil {
			def = d
		}
	}
	fs.DurationVar(p, name, def, usage+" (env "+envName(name)+")")
}

func (fs *flagSet) note(name, value string, err error) {
	if err != nil && fs.envErr == nil {
		fs.envErr = fmt.Errorf("environment variable %s=%q: %w", envName(name), value, err)
	}
}

// parse parses args and reports the first bad environment value. Help
// is printed on stdout and returned as flag.ErrHelp (exit code 0). The
// flag package has printed a bad flag's line, then the usage follows, so
// that error becomes a bare errUsage (exit code 2, nothing more printed).
func (fs *flagSet) parse(args []string) error {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fs.printUsage(fs.stdout)
		return err
	} else if err != nil {
		fs.printUsage(fs.stderr)
		return errUsage
	}
	if fs.envErr != nil {
		return fmt.Errorf("%w: %w", fs.envErr, errUsage)
	}
	return nil
}

// Validate checks the serve configuration once, before anything is opened
// or created: an unknown or out-of-range value is a usage error naming the
// flag and its variable, never a silent default.
func (c *Config) Validate() error {
	var errs []error
	bad := func(flagName, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s (%s) %s: %w", flagName, envName(flagName), fmt.Sprintf(format, args...), errUsage))
	}
	if strings.TrimSpace(c.DataDir) == "" {
		bad("data-dir", "must name a directory")
	}
	if c.DemoCredits < 0 {
		bad("demo-credits", "must be 0 or more, got %d", c.DemoCredits)
	}
	for _, validate := range []func(badValue){
		c.validateRates, c.validateWorkers, c.validateStore, c.validateFollow, c.validateStripe,
		c.validateDurations, c.validateNetwork, c.validateLogging,
	} {
		validate(bad)
	}
	return errors.Join(errs...)
}

// badValue reports a flag's value as a usage error.
type badValue = func(flagName, format string, args ...any)

// validateRates checks the rate limits: each rate a finite number of 0 or
// more, and a burst of at least 1 while its rate is on.
func (c *Config) validateRates(bad badValue) {
	for _, l := range []struct {
		name  string
		rate  float64
		burst int
	}{
		{"search", c.SearchRate, c.SearchBurst},
		{"session", c.SessionRate, c.SessionBurst},
		{"write", c.WriteRate, c.WriteBurst},
	} {
		if !(l.rate >= 0) || math.IsInf(l.rate, 0) {
			bad(l.name+"-rate", "must be a number of 0 or more (0 turns the limit off), got %v", l.rate)
		}
		if l.rate > 0 && l.burst < 1 {
			bad(l.name+"-burst", "must be 1 or more while --%s-rate is on, got %d", l.name, l.burst)
		}
	}
}

// validateWorkers checks the counts of things at work at once.
func (c *Config) validateWorkers(bad badValue) {
	for _, n := range []struct {
		name  string
		value int
	}{
		{"batches-in-flight", c.BatchesInFlight},
		{"uploads-in-flight", c.UploadsInFlight},
		{"downloads-in-flight", c.DownloadsInFlight},
		{"downloads-per-account", c.DownloadsPerAccount},
		{"webhook-workers", c.WebhookWorkers},
		{"keep", c.Keep},
	} {
		if n.value < 1 {
			bad(n.name, "must be 1 or more, got %d", n.value)
		}
	}
}

func (c *Config) validateDurations(bad badValue) {
	if c.SessionTTL <= 0 {
		bad("session-ttl", "must be longer than 0, got %s", c.SessionTTL)
	}
	if c.WebhookTimeout <= 0 || c.WebhookRetryBase <= 0 || c.WebhookRetryFor <= 0 {
		bad("webhook-timeout", "--webhook-timeout, --webhook-retry-base and --webhook-retry-for must be longer than 0")
	}
	if c.StoreCheckTimeout <= 0 {
		bad("store-check-timeout", "must be longer than 0 (use --skip-store-check to skip the check), got %s", c.StoreCheckTimeout)
	}
	if c.SearchTimeout <= 0 {
		bad("search-timeout", "must be longer than 0, got %s", c.SearchTimeout)
	}
	if c.ShutdownGrace < 0 {
		bad("shutdown-grace", "must be 0 or longer, got %s", c.ShutdownGrace)
	}
	if c.PollInterval <= 0 {
		bad("poll-interval", "must be longer than 0, got %s", c.PollInterval)
	}
}

func (c *Config) validateNetwork(bad badValue) {
	if c.MaxConnections < 0 || c.MaxConnectionsPerAddr < 0 {
		bad("max-connections", "--max-connections and --max-connections-per-addr must be 0 (no cap) or more, got %d and %d", c.MaxConnections, c.MaxConnectionsPerAddr)
	}
	for _, p := range splitList(c.TrustedProxies) {
		if !validProxy(p) {
			bad("trusted-proxies", "lists %q, which is neither an IP address nor a CIDR range", p)
		}
	}
	if c.PublicURL != "" {
		if _, err := httpapi.ParsePublicURL(c.PublicURL); err != nil {
			bad("public-url", "%v", err)
		}
	}
}

func (c *Config) validateLogging(bad badValue) {
	if err := checkLogFormat(c.LogFormat); err != nil {
		bad("log-format", "%v", err)
	}
	if _, err := parseLogLevel(c.LogLevel); err != nil {
		bad("log-level", "%v", err)
	}
}

func validProxy(s string) bool {
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// checkLogFormat accepts the values of --log-format.
func checkLogFormat(format string) error {
	switch format {
	case "auto", "text", "json":
		return nil
	}
	return fmt.Errorf("must be auto, text or json, got %q", format)
}

// parseLogLevel accepts the values of --log-level.
func parseLogLevel(level string) (slog.Level, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return lvl, fmt.Errorf("must be debug, info, warn or error, got %q", level)
	}
	return lvl, nil
}
