package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// envPrefix prefixes every environment variable the binary reads.
const envPrefix = "COMPANYDOCS_"

// flagSet wraps flag.FlagSet so that every flag can also be set by an
// environment variable: flags win, then COMPANYDOCS_<NAME>, then defaults.
type flagSet struct {
	*flag.FlagSet
	envErr error
}

func newFlagSet(name string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return &flagSet{FlagSet: fs}
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

// parse parses args and reports the first bad environment value.
func (fs *flagSet) parse(args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	return fs.envErr
}
