package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLinkIndexSharesGenerationsNotLocks: a second node's data directory
// gets the published generations as hard links (the same inodes) and
// CURRENT, but no lock or unfinished build, which belong to the first
// node's directory.
func TestLinkIndexSharesGenerationsNotLocks(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "node2")
	for name, body := range map[string]string{
		"index/CURRENT":               "gen-a\n",
		"index/gen-a/meta.json":       "{}",
		"index/gen-a/store/root.bolt": "profiles",
		"index/LOCK":                  "4242 ingest",
		"index/PUBLISHING":            "gen-b",
		"index/.building-x/part":      "half",
		"LOCK":                        "4242 serve",
		"orders.db":                   "orders",
	} {
		path := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := LinkIndex(src, dst); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index/CURRENT", "index/gen-a/meta.json", "index/gen-a/store/root.bolt"} {
		a, errA := os.Stat(filepath.Join(src, name))
		b, errB := os.Stat(filepath.Join(dst, name))
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			t.Errorf("%s: not linked into the second directory (%v, %v)", name, errA, errB)
		}
	}
	for _, name := range []string{"index/LOCK", "index/PUBLISHING", "index/.building-x", "LOCK", "orders.db"} {
		if _, err := os.Stat(filepath.Join(dst, name)); !os.IsNotExist(err) {
			t.Errorf("%s: copied into the second directory (%v), want left out", name, err)
		}
	}
}
