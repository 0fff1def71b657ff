package ingest

import (
	"encoding/json"
	"sort"
	"testing"

	"companydocs"
	"companydocs/register"
)

// memSink is a map-based Sink. It stores copies, as a real store would, so
// that a test notices a change that was not Put.
type memSink struct {
	byID     map[string][]byte
	byNumber map[string]map[string]bool // "TYPE|number" -> ids
}

func newMemSink() *memSink {
	return &memSink{byID: map[string][]byte{}, byNumber: map[string]map[string]bool{}}
}

func (s *memSink) Get(id string) (*companydocs.Profile, error) {
	b, ok := s.byID[id]
	if !ok {
		return nil, nil
	}
	var p companydocs.Profile
	return &p, json.Unmarshal(b, &p)
}

func (s *memSink) Put(p *companydocs.Profile) error {
	b, err := json.Marshal(p)
	if old, _ := s.Get(p.ID); old != nil {
		delete(s.byNumber[numberKey(old.Ref.Type, old.Ref.Number)], p.ID)
	}
	s.byID[p.ID] = b
	key := numberKey(p.Ref.Type, p.Ref.Number)
	if s.byNumber[key] == nil {
		s.byNumber[key] = map[string]bool{}
	}
	s.byNumber[key][p.ID] = true
	return err
}

// clone returns an independent copy of the sink.
func (s *memSink) clone() *memSink {
	c := newMemSink()
	for id, b := range s.byID {
		c.byID[id] = b
	}
	for key, ids := range s.byNumber {
		c.byNumber[key] = map[string]bool{}
		for id := range ids {
			c.byNumber[key][id] = true
		}
	}
	return c
}

func numberKey(t register.Type, number string) string { return string(t) + "|" + number }

func (s *memSink) ByNumber(t register.Type, number string) ([]*companydocs.Profile, error) {
	var ids []string
	for id := range s.byNumber[numberKey(t, number)] {
		ids = append(ids, id)
	}
	sort.Strings(ids) // deterministic, like an index
	var out []*companydocs.Profile
	for _, id := range ids {
		p, err := s.Get(id)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (s *memSink) ids() []string {
	ids := make([]string, 0, len(s.byID))
	for id := range s.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (s *memSink) mustGet(t testing.TB, id string) *companydocs.Profile {
	t.Helper()
	p, err := s.Get(id)
	if err != nil || p == nil {
		t.Fatalf("profile %s not in sink (err %v)", id, err)
	}
	return p
}

// Reason returns the count of one kind and reason (0 if it never occurred).
func (s *Summary) Reason(kind, reason string) int {
	if rs := s.reasonIndex[kind+"\x00"+reason]; rs != nil {
		return rs.Count
	}
	return 0
}
