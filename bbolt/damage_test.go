package bbolt

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs/internal/boltfile"

	bolt "go.etcd.io/bbolt"
)

// damageDB is a real orders.db and what the API said while filling it.
type damageDB struct {
	file     []byte
	pageSize int
	pages    []boltfile.Page
	keys     map[string]string // account -> API key
	credits  map[string]int64
	orders   map[string]int // account -> orders
	sessions int
}

// Size of the database the damage tests make: enough for branch pages in
// the sessions and orders buckets.
const (
	damageAccounts        = 40
	damageSessionsPer     = 10
	damageOrdersPer       = 6
	damageRevokedSessions = 40
)

// buildDamageDB fills an orders.db through the ordering API with real
// profiles: accounts, sessions (some revoked, so that pages are freed) and
// orders with and without Idempotency-Keys.
func buildDamageDB(tb testing.TB) *damageDB {
	tb.Helper()
	fx := realFixture(tb)
	path := filepath.Join(tb.TempDir(), DatabaseFile)
	s, err := openService(path, fx.profiles, shippedPlans(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	d := &damageDB{keys: map[string]string{}, credits: map[string]int64{}, orders: map[string]int{}}
	var tokens []string
	for a := range damageAccounts {
		name := fmt.Sprintf("account-%02d", a)
		key, err := s.CreateAccount(name, 500)
		if err != nil {
			tb.Fatal(err)
		}
		d.keys[name] = key
		for range damageSessionsPer {
			sess, err := s.CreateSession(ctx, key)
			if err != nil {
				tb.Fatal(err)
			}
			tokens = append(tokens, sess.Token)
		}
		for i := range damageOrdersPer {
			idem := ""
			if i%2 == 0 {
				idem = fmt.Sprintf("idem-%d-%d", a, i)
			}
			if _, err := s.CreateOrder(ctx, name, request(fx.live[i%len(fx.live)], "CD", "subscription-basic"), idem); err != nil {
				tb.Fatal(err)
			}
			d.orders[name]++
		}
	}
	for _, tok := range tokens[:damageRevokedSessions] {
		if err := s.RevokeSession(ctx, tok); err != nil {
			tb.Fatal(err)
		}
	}
	d.sessions = len(tokens)
	accounts, err := s.All()
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range accounts {
		d.credits[a.Name] = a.Credits
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	d.file = mustRead(tb, path)
	d.pageSize, d.pages = pagesOf(tb, path)
	return d
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// pagesOf lists the pages of a bbolt file.
func pagesOf(tb testing.TB, path string) (int, []boltfile.Page) {
	tb.Helper()
	bf, err := boltfile.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer bf.Close()
	var pages []boltfile.Page
	if err := bf.Walk(time.Time{}, func(p boltfile.Page) { pages = append(pages, p) }); err != nil {
		tb.Fatal(err)
	}
	return int(bf.Meta.PageSize), pages
}

// damageCase changes a copy of the file.
type damageCase struct {
	name   string
	damage func(b []byte) []byte
}

// damageCases returns the matrix: the file emptied, cut at several
// points, its meta pages, the freelist and a branch and leaves of each
// bucket changed in their header, their element table and their data.
func (d *damageDB) damageCases(tb testing.TB) []damageCase {
	tb.Helper()
	ps, n := d.pageSize, len(d.file)
	cut := func(size int) func([]byte) []byte { return func(b []byte) []byte { return b[:size] } }
	cases := []damageCase{
		{"zero-length", cut(0)},
		{"truncated inside meta page 0", cut(100)},
		{"truncated inside meta page 1", cut(ps + 100)},
		{"truncated after the meta pages", cut(2 * ps)},
		{"truncated to half", cut(n / 2)},
		{"truncated one page short", cut(n - ps)},
		{"meta page 0 high-water mark flipped", flip(16 + 40)},
		{"meta page 1 high-water mark flipped", flip(ps + 16 + 40)},
		{"both meta pages flipped", func(b []byte) []byte { return flip(ps + 16 + 8)(flip(16 + 8)(b)) }},
	}
	for _, p := range d.targets(tb) {
		for _, spot := range d.spots(p) {
			cases = append(cases, damageCase{fmt.Sprintf("%s %s page %d %s", bucketLabel(p), p.Type, p.ID, spot.name), flip(int(p.ID)*ps + spot.offset)})
		}
	}
	return cases
}

func bucketLabel(p boltfile.Page) string {
	if p.Type == "freelist" {
		return "the"
	}
	if p.Bucket == "" {
		return "root bucket"
	}
	return "bucket " + p.Bucket
}

// targets picks the freelist, the root bucket's page, and per bucket its
// first branch page and its first and last leaf page.
func (d *damageDB) targets(tb testing.TB) []boltfile.Page {
	tb.Helper()
	var out []boltfile.Page
	seen := map[string]bool{}
	var lastLeaf = map[string]boltfile.Page{}
	for _, p := range d.pages {
		k := p.Bucket + "/" + p.Type
		if p.Type == "leaf" {
			lastLeaf[p.Bucket] = p
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	for _, b := range allBuckets {
		if p, ok := lastLeaf[string(b)]; ok && !containsPage(out, p.ID) {
			out = append(out, p)
		}
	}
	for _, want := range []string{"sessions/branch", "orders/branch", "/leaf", "/freelist", "accounts/leaf", "keys/leaf", "sessions/leaf", "orders/leaf", "account_orders/leaf", "idempotency/leaf", "open_orders/leaf"} {
		if !seen[want] {
			tb.Fatalf("the database has no %s page: the matrix would miss it (pages %v)", want, d.pages)
		}
	}
	return out
}

func containsPage(pages []boltfile.Page, id uint64) bool {
	for _, p := range pages {
		if p.ID == id {
			return true
		}
	}
	return false
}

type spot struct {
	name   string
	offset int
}

// spots are the bytes of a page to flip: its type, its element count,
// the second element's position field, and the middle of its data.
func (d *damageDB) spots(p boltfile.Page) []spot {
	page := d.file[int(p.ID)*d.pageSize:]
	count := int(binary.LittleEndian.Uint16(page[10:]))
	out := []spot{{"type flipped", 8}, {"element count flipped", 11}}
	if p.Type == "freelist" {
		return append(out, spot{"a free page id flipped", 16 + 6})
	}
	out = append(out, spot{"element position flipped", 16 + 16 + 4})
	if p.Type == "leaf" && count > 0 {
		last := 16 + 16*(count-1)
		end := last + int(binary.LittleEndian.Uint32(page[last+4:])+binary.LittleEndian.Uint32(page[last+8:])+binary.LittleEndian.Uint32(page[last+12:]))
		out = append(out, spot{"a data byte flipped", (16 + 16*count + end) / 2})
	}
	return out
}

// flip inverts the byte at off (and the one after, so that a bit the
// reader ignores is not all that changes).
func flip(off int) func([]byte) []byte {
	return func(b []byte) []byte {
		b[off] ^= 0xff
		b[off+1] ^= 0x5a
		return b
	}
}

// TestDamagedDatabaseMatrix damages a real orders.db one way at a time
// and opens it: Open refuses it with an error naming the file and the
// damage, and leaves it byte for byte as it was, or opens a database that
// passes the check and still holds every account, balance, key and order.
// Never a panic, never an empty database in its place.
func TestDamagedDatabaseMatrix(t *testing.T) {
	d := buildDamageDB(t)
	fx := realFixture(t)
	plans := shippedPlans(t)
	refused, opened := 0, 0
	for _, c := range d.damageCases(t) {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DatabaseFile)
			damaged := c.damage(bytes.Clone(d.file))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := openService(path, fx.profiles, plans, nil)
			if err != nil {
				refused++
				checkRefusal(t, path, damaged, err)
				return
			}
			opened++
			defer s.Close()
			d.checkIntact(t, s)
		})
	}
	t.Logf("%d damaged files refused, %d opened intact", refused, opened)
}

// checkRefusal checks the error of Open on a damaged file and that the
// file was left alone.
func checkRefusal(t *testing.T, path string, before []byte, err error) {
	t.Helper()
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %q: want ErrDamaged, naming %s", err, path)
	}
	if after := mustRead(t, path); sha256.Sum256(after) != sha256.Sum256(before) {
		t.Errorf("the refused file was changed: %d bytes before, %d after", len(before), len(after))
	}
}

// checkIntact checks that a database opened after damage holds what the
// API stored: it passes the check, and every account has its balance, its
// key and its orders.
func (d *damageDB) checkIntact(t *testing.T, s *service) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatalf("opened, but the check fails: %v", err)
	}
	st, err := s.Stats()
	if err != nil || st.Accounts != len(d.keys) || st.Sessions != d.sessions {
		t.Errorf("stats %+v, %v; want %d accounts, %d sessions", st, err, len(d.keys), d.sessions)
	}
	for name, key := range d.keys {
		a, err := s.Account(name)
		if err != nil || a.Credits != d.credits[name] {
			t.Errorf("account %s: %+v, %v; want %d credits", name, a, err, d.credits[name])
			continue
		}
		if _, err := s.CreateSession(ctx, key); err != nil {
			t.Errorf("session for %s: %v", name, err)
		}
		orders, _, err := s.List(ctx, name, "", "", 100)
		if err != nil || len(orders) != d.orders[name] {
			t.Errorf("orders of %s: %d, %v; want %d", name, len(orders), err, d.orders[name])
		}
	}
}

// TestZeroLengthDatabaseIsRefused reproduces the first damage found: a
// zero-length orders.db was silently initialised as a new, empty database.
func TestZeroLengthDatabaseIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), DatabaseFile)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{})
	checkRefusal(t, path, nil, err)
	if err == nil || !strings.Contains(err.Error(), "empty (0 bytes)") {
		t.Errorf("error %v does not say the file is empty", err)
	}
}

// TestMissingDatabaseIsCreated: only a missing file becomes a new database.
func TestMissingDatabaseIsCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), DatabaseFile)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only open of a missing file: %v, want not exist", err)
	}
}

// TestAgreesWithBbolt checks package boltfile's reading of the file
// format against bbolt's own: every page the walk reaches has the type
// bbolt gives it, and the walk reaches every page bbolt does not list as
// free (bbolt's check passing means none is lost).
func TestAgreesWithBbolt(t *testing.T) {
	d := buildDamageDB(t)
	path := filepath.Join(t.TempDir(), DatabaseFile)
	if err := os.WriteFile(path, d.file, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.db.View(func(tx *bolt.Tx) error {
		reached := 2 // the meta pages
		for _, p := range d.pages {
			info, err := tx.Page(int(p.ID))
			if err != nil || info == nil || info.Type != p.Type || info.OverflowCount != int(p.Overflow) {
				t.Errorf("page %d: boltfile says %s+%d, bbolt %+v, %v", p.ID, p.Type, p.Overflow, info, err)
			}
			reached += 1 + int(p.Overflow)
		}
		if reached > int(tx.Size())/d.pageSize {
			t.Errorf("the walk reached %d pages, the file has %d", reached, int(tx.Size())/d.pageSize)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
