package e2e

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// Bounds of the overload test: the configured search rate, and the flood
// of ten times that rate one client sends while another searches calmly.
const (
	OverloadRate     = 5
	OverloadBurst    = 5
	OverloadFactor   = 10
	OverloadDuration = 3 * time.Second
	OverloadWorkers  = 5
)

// LoopbackClient returns an HTTP client whose connections come from the
// loopback address local (127.0.0.2 and so on are all this machine).
func LoopbackClient(t *testing.T, local string) *http.Client {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: OverloadWorkers}}
}
