package bbolt

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedFirstMetaPage damages meta page 0 of a real orders.db and
// leaves meta page 1 intact. A meta page whose checksum fails but whose
// header is bbolt's (what an interrupted commit of that page leaves) is
// tolerated the way bbolt tolerates it: the file opens from meta page 1,
// intact, with a warning naming the file and both pages. A meta page
// whose header was changed cannot come from an interrupted commit (bbolt
// writes the same header on every commit) and makes bbolt's check panic
// ("assertion failed: Page expected to be: 0"): the file is refused,
// untouched, with an error that names the file and the page and carries
// no panic. Before the fix the header cases were refused only through
// the recovered panic of bbolt's check, "panic: assertion failed".
func TestDamagedFirstMetaPage(t *testing.T) {
	d := buildDamageDB(t)
	ps := d.pageSize
	putID := func(page int, id uint64) func([]byte) []byte {
		return func(b []byte) []byte { binary.LittleEndian.PutUint64(b[page*ps:], id); return b }
	}
	cases := []struct {
		name   string
		damage func([]byte) []byte
		opens  bool
		says   string // what the refusal or the warning says
	}{
		{"meta page 0 checksum fails", flip(16 + 56), true, "meta page 0 is invalid (checksum mismatch); bbolt uses meta page 1"},
		{"meta page 0 high-water mark flipped, header intact", flip(16 + 40), true, "meta page 0 is invalid (checksum mismatch); bbolt uses meta page 1"},
		{"meta page 0 header id says 7", putID(0, 7), false, "meta page 0 calls itself page 7"},
		{"meta page 0 header id flipped", flip(0), false, "meta page 0 calls itself page 23295"},
		{"meta page 0 header flags flipped", flip(8), false, "meta page 0 calls itself page 0 with flags 0x5afb"},
		{"meta page 0 header flags say leaf", func(b []byte) []byte { b[8] = 0x02; return b }, false, "meta page 0 calls itself page 0 with flags 0x2"},
		{"meta page 0 checksum fails and header id flipped", func(b []byte) []byte { return flip(0)(flip(16 + 56)(b)) }, false, "meta page 0 calls itself page 23295"},
		{"meta page 1 header id says 0", putID(1, 0), false, "meta page 1 calls itself page 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DatabaseFile)
			damaged := c.damage(bytes.Clone(d.file))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			var logged bytes.Buffer
			db, err := Open(path, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if !c.opens {
				if err == nil {
					db.Close()
					t.Fatal("opened; want refused")
				}
				checkRefusal(t, path, damaged, err)
				if msg := err.Error(); strings.Contains(msg, "panic") || !strings.Contains(msg, c.says) {
					t.Errorf("refusal %q: want %q and no panic", msg, c.says)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			db.Close()
			if !strings.Contains(logged.String(), c.says) || !strings.Contains(logged.String(), path) {
				t.Errorf("warning %q: want %q and the path", logged.String(), c.says)
			}
			s, err := openService(path, realFixture(t).profiles, shippedPlans(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			d.checkIntact(t, s)
		})
	}
}
