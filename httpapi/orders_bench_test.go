package httpapi

import (
	"bytes"
	"companydocs/plansfile"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"companydocs"
)

// BenchmarkCreateOrderHTTP measures durable creates per second through a
// real listener, like the orders load benchmark: 32 clients, each with its
// own account and session, ordering AD and CD for live profiles in turn.
// Client and server share the process (and the cores), as they share the
// machine in the load benchmark.
func BenchmarkCreateOrderHTTP(b *testing.B) {
	profiles, _, _ := loadOrderProfiles(b)
	var live []*companydocs.Profile
	for _, p := range profiles {
		if !p.Removed && len(p.Documents) == 2 {
			live = append(live, p)
		}
	}
	plans, err := plansfile.Load(shippedPlansFile())
	if err != nil {
		b.Fatal(err)
	}
	svc, orders := openOrdering(b, profiles, plans)
	deps := orderingDeps(svc, orders)
	deps.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := newTestServer(b, deps)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Shutdown(b.Context())
	base := "http://" + ln.Addr().String()

	const clients = 32
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 2 * clients, MaxIdleConnsPerHost: 2 * clients, DisableCompression: true,
	}}
	var accounts atomic.Int64
	// login makes a new account and session: each account orders every
	// (profile, document) pair once, so no create is a duplicate.
	login := func() (string, error) {
		key, err := svc.CreateAccount(fmt.Sprintf("bench-%d", accounts.Add(1)), 0)
		if err != nil {
			return "", err
		}
		status, body := post(b, client, base+"/api/v1/auth/sessions/", "", `{"api_key":"`+key+`"}`)
		var sess companydocs.Session
		if status != http.StatusCreated || json.Unmarshal(body, &sess) != nil {
			return "", fmt.Errorf("log in: %d %s", status, body)
		}
		return sess.Token, nil
	}
	tokens := make([]string, clients)
	for i := range tokens {
		if tokens[i], err = login(); err != nil {
			b.Fatal(err)
		}
	}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := tokens[i]
			for j := 0; next.Add(1) <= int64(b.N); j++ {
				if j > 0 && j%(2*len(live)) == 0 {
					var err error
					if token, err = login(); err != nil {
						b.Error(err)
						return
					}
				}
				doc, plan := "AD", "ad-single"
				if j%2 == 1 {
					doc, plan = "CD", "cd-single"
				}
				p := live[(j/2)%len(live)]
				status, body := post(b, client, base+"/api/v1/documents/orders/", token, orderBody(p, doc, plan))
				if status != http.StatusCreated && failed.Add(1) == 1 {
					b.Errorf("create: %d %s", status, body)
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
}

func post(tb testing.TB, c *http.Client, url, token, body string) (int, []byte) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		tb.Error(err)
		return 0, nil
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		tb.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Error(err)
	}
	return resp.StatusCode, data
}
