package serve

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/app"
	"companydocs/internal/cli"
	"companydocs/internal/e2e"
)

// TestServeRejectsInvalidConfiguration: every out-of-range or unknown
// value, from a flag or from its variable, is a usage error naming the
// flag, found before anything is opened.
func TestServeRejectsInvalidConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  [2]string
		want string
	}{
		{"negative demo credits", []string{"--demo", "--demo-credits", "-5"}, [2]string{}, "--demo-credits"},
		{"negative demo credits from the environment", []string{"--demo"}, [2]string{"COMPANYDOCS_DEMO_CREDITS", "-1"}, "COMPANYDOCS_DEMO_CREDITS"},
		{"zero session lifetime", []string{"--session-ttl", "0s"}, [2]string{}, "--session-ttl"},
		{"negative session lifetime", []string{"--session-ttl", "-1h"}, [2]string{}, "--session-ttl"},
		{"negative search rate", []string{"--search-rate", "-1"}, [2]string{}, "--search-rate"},
		{"search rate not a number", []string{"--search-rate", "NaN"}, [2]string{}, "--search-rate"},
		{"burst 0 with a rate", []string{"--search-rate", "5", "--search-burst", "0"}, [2]string{}, "--search-burst"},
		{"negative session rate", []string{"--session-rate", "-1"}, [2]string{}, "--session-rate"},
		{"session burst 0 with a rate", []string{"--session-rate", "1", "--session-burst", "0"}, [2]string{}, "--session-burst"},
		{"zero store check timeout", []string{"--store-check-timeout", "0s"}, [2]string{}, "--store-check-timeout"},
		{"zero search timeout", []string{"--search-timeout", "0s"}, [2]string{}, "--search-timeout"},
		{"negative search timeout", []string{"--search-timeout", "-1s"}, [2]string{}, "--search-timeout"},
		{"negative shutdown grace", []string{"--shutdown-grace", "-1s"}, [2]string{}, "--shutdown-grace"},
		{"negative poll interval", []string{"--poll-interval", "-1s"}, [2]string{}, "--poll-interval"},
		{"zero poll interval", []string{"--poll-interval", "0s"}, [2]string{}, "--poll-interval"},
		{"keep 0", []string{"--keep", "0"}, [2]string{}, "--keep"},
		{"negative write rate", []string{"--write-rate", "-1"}, [2]string{}, "--write-rate"},
		{"write burst 0 with a rate", []string{"--write-rate", "1", "--write-burst", "0"}, [2]string{}, "--write-burst"},
		{"negative connection cap", []string{"--max-connections-per-addr", "-1"}, [2]string{}, "--max-connections"},
		{"unknown log format", []string{"--log-format", "yaml"}, [2]string{}, "--log-format"},
		{"unknown log level", []string{"--log-level", "verbose"}, [2]string{}, "--log-level"},
		{"unknown log level from the environment", nil, [2]string{"COMPANYDOCS_LOG_LEVEL", "loud"}, "COMPANYDOCS_LOG_LEVEL"},
		{"trusted proxy not an address", []string{"--trusted-proxies", "10.0.0.1,proxy.example"}, [2]string{}, "proxy.example"},
		{"empty data directory", []string{"--data-dir", " "}, [2]string{}, "--data-dir"},
		{"public URL not absolute", []string{"--public-url", "docs.example.com/companydocs"}, [2]string{}, "--public-url"},
		{"public URL of another scheme", []string{"--public-url", "ftp://docs.example.com/"}, [2]string{}, "http or https"},
		{"public URL without a host", []string{"--public-url", "https:///companydocs"}, [2]string{}, "must name a host"},
		{"public URL with a space in the host", []string{"--public-url", "https://docs example.com/"}, [2]string{}, "--public-url"},
		{"public URL with a user", []string{"--public-url", "https://me:secret@docs.example.com/"}, [2]string{}, "user or password"},
		{"public URL with a query", []string{"--public-url", "https://docs.example.com/?tenant=1"}, [2]string{}, "no query"},
		{"public URL with an empty query", []string{"--public-url", "https://docs.example.com/?"}, [2]string{}, "no query"},
		{"public URL with a fragment", []string{"--public-url", "https://docs.example.com/#top"}, [2]string{}, "no fragment"},
		{"public URL with a query from the environment", nil, [2]string{"COMPANYDOCS_PUBLIC_URL", "https://docs.example.com/?a"}, "COMPANYDOCS_PUBLIC_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env[0] != "" {
				t.Setenv(tc.env[0], tc.env[1])
			}
			m := app.NewMain()
			m.Stderr = &bytes.Buffer{}
			err := m.ParseFlags(tc.args)
			if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseFlags(%q): %v, want a usage error naming %s", tc.args, err, tc.want)
			}
		})
	}
	t.Run("the defaults and the documented values are accepted", func(t *testing.T) {
		m := app.NewMain()
		args := []string{"--search-rate", "0", "--search-burst", "0", "--shutdown-grace", "0s", "--log-level", "WARN",
			"--log-format", "text", "--trusted-proxies", "10.0.0.1, 192.168.0.0/16,::1", "--demo-credits", "0",
			"--public-url", "https://docs.example.com/companydocs/"}
		if err := m.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		if err := app.NewMain().ParseFlags(nil); err != nil {
			t.Fatal(err)
		}
	})
}

// TestNegativeDemoCreditsCreateNothing: serve --demo --demo-credits -5
// used to stop after it had created the demo account with 100 credits.
func TestNegativeDemoCreditsCreateNothing(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 50, e2e.SampleFile(t))
	before := e2e.TreeState(t, dir)
	var stdout, stderr bytes.Buffer
	err := app.RunCommand(context.Background(), []string{"serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--demo", "--demo-credits", "-5"}, &stdout, &stderr)
	if !errors.Is(err, cli.ErrUsage) || app.ExitCode(err) != 2 || !strings.Contains(err.Error(), "--demo-credits") {
		t.Fatalf("serve --demo-credits -5: %v (exit code %d), want a usage error naming --demo-credits", err, app.ExitCode(err))
	}
	if after := e2e.TreeState(t, dir); after != before {
		t.Errorf("the refused start changed the data directory:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// TestAccountsHelpTouchesNothing: help and usage errors of the accounts
// command create no order database (it used to create ./var/orders.db).
func TestAccountsHelpTouchesNothing(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("var", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"accounts", "--help"}, {"accounts", "-h"}, {"accounts", "help"},
		{"accounts", "create", "--help"}, {"accounts", "create", "-h"}, {"accounts", "list", "-h"}, {"accounts", "credit", "--help"},
		{"accounts", "create", "--credits", "5"}, {"accounts", "create", "--name", "x", "--credits", "-1"},
		{"accounts", "credit", "--name", "x"}, {"accounts", "lists"}, {"accounts", "list", "extra"},
	} {
		var stdout, stderr bytes.Buffer
		err := app.RunCommand(context.Background(), args, &stdout, &stderr)
		if !errors.Is(err, flag.ErrHelp) && app.ExitCode(err) != 2 {
			t.Errorf("%q: %v (exit code %d), want help or a usage error (exit code 2)", args, err, app.ExitCode(err))
		}
		if errors.Is(err, flag.ErrHelp) && !strings.Contains(stdout.String(), "usage") {
			t.Errorf("%q printed no usage: %q", args, stdout.String())
		}
		if entries, _ := os.ReadDir("var"); len(entries) > 0 {
			t.Fatalf("%q created %s", args, entries[0].Name())
		}
		if _, err := os.Stat(filepath.Join("var", "LOCK")); err == nil {
			t.Fatalf("%q created the lock", args)
		}
	}
}

// TestIngestRejectsInvalidFlags: the ingest command validates its flags
// before it opens the data directory.
func TestIngestRejectsInvalidFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var")
	for _, args := range [][]string{
		{"--keep", "0"}, {"--max-records", "-1"}, {"--log-format", "xml"},
	} {
		var stdout, stderr bytes.Buffer
		err := app.RunCommand(context.Background(), append(append([]string{"ingest", "--data-dir", dir}, args...), e2e.SampleFile(t)), &stdout, &stderr)
		if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("ingest %q: %v, want a usage error naming %s", args, err, args[0])
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("ingest %q created the data directory", args)
		}
	}
}
