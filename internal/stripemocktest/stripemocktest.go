// Package stripemocktest runs stripe-mock, Stripe's own mock of its API,
// for tests: on 127.0.0.1 and a port the system picks (its HTTPS side on
// a Unix socket in the test's directory, so that nothing listens beyond
// loopback), stopped when the test ends. stripe-mock checks every request
// against Stripe's OpenAPI document and answers with Stripe's fixtures;
// it keeps no state and sends no events, so tests sign the events they
// post themselves (Event).
//
// The binary is installed once by scripts/stripemock.sh into a cache
// outside the checkout; when it is missing, Binary runs the script (about
// a minute), so that the payment tests need nothing but Go on a fresh
// machine.
package stripemocktest

import (
	"bufio"
	"companydocs/internal/toolcache"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs/stripepay/signedevent"
)

// Server is a running stripe-mock.
type Server struct {
	// URL is its HTTP address, http://127.0.0.1:port, for the provider's
	// API URL.
	URL string
	cmd *exec.Cmd
}

var installOnce sync.Once
var installErr error

// Binary returns the path of the stripe-mock binary, installing it with
// scripts/stripemock.sh when it is missing.
func Binary() (string, error) {
	bin, err := toolcache.Bin("stripe-mock")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	installOnce.Do(func() { installErr = install() })
	if installErr != nil {
		return "", installErr
	}
	return bin, nil
}

// install runs scripts/stripemock.sh from the module's root.
func install() error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for ; ; dir = filepath.Dir(dir) {
		script := filepath.Join(dir, "scripts", "stripemock.sh")
		if _, err := os.Stat(script); err == nil {
			out, err := exec.Command(script).CombinedOutput()
			if err != nil {
				return fmt.Errorf("scripts/stripemock.sh: %v\n%s", err, out)
			}
			return nil
		}
		if filepath.Dir(dir) == dir {
			return errors.New("no stripe-mock binary, and no scripts/stripemock.sh above the test's directory to install it")
		}
	}
}

// Start starts stripe-mock and stops it when tb ends. A failure fails tb.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		tb.Fatal(err)
	}
	sock := filepath.Join(tb.TempDir(), "https.sock")
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:", "-https-unix", sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start stripe-mock: %v", err)
	}
	s := &Server{cmd: cmd}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "Listening for HTTP at address: "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		s.URL = "http://" + a
	case <-time.After(30 * time.Second):
		tb.Fatal("stripe-mock did not say where it listens within 30 s")
	}
	return s
}

// Secret is the webhook signing secret tests configure and sign with.
const Secret = "whsec_companydocs_test_signing_secret"

// Event is a checkout session event as Stripe sends it: the JSON body
// and its Stripe-Signature header, signed with secret at at. session
// holds the checkout session's fields (id, client_reference_id,
// payment_intent, amount_total, payment_status ...).
func Event(id, typ string, session map[string]any, secret string, at time.Time) (body []byte, signature string) {
	obj := map[string]any{"object": "checkout.session"}
	for k, v := range session {
		obj[k] = v
	}
	return signedevent.Event(id, typ, obj, secret, at)
}

// Sign returns the Stripe-Signature header of body signed with secret at
// at, as Stripe writes it: for bodies Event does not make (an event
// without an id, say).
func Sign(body []byte, secret string, at time.Time) string {
	return signedevent.Sign(body, secret, at)
}
