package ordering

import (
	"context"
	"crypto/sha256"
	"time"

	"companydocs"
)

// SessionRecord is the stored form of a session; the key is the token hash.
type SessionRecord struct {
	Account   string    `json:"account"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Revoked   bool      `json:"revoked,omitempty"`
	// EndedBy says why a revoked session ended when the client did not end
	// it: endedByKeyRotation. Empty for a client's own sign-out.
	EndedBy string `json:"ended_by,omitempty"`
}

// endedByKeyRotation marks the sessions ended because their account's API
// key was replaced.
const endedByKeyRotation = "key_rotation"

// CreateSession exchanges an API key for a session token valid for the
// configured TTL. An account keeps at most maxSessionsPerAccount sessions:
// beyond that its oldest sessions end here.
func (s *Accounts) CreateSession(ctx context.Context, apiKey string) (*companydocs.Session, error) {
	if apiKey == "" {
		return nil, companydocs.Refusal(companydocs.EVALIDATION, "refusal.api_key_required", nil)
	}
	token := newSecret(sessionTokenPrefix)
	now := s.now().UTC()
	rec := SessionRecord{CreatedAt: now, ExpiresAt: now.Add(s.ttl)}
	hash := sha256.Sum256([]byte(token))
	var ended [][32]byte
	err := s.store.Update(ctx, func(tx Tx) error {
		ended = nil
		acct, err := accountForKey(tx, apiKey)
		if err != nil {
			return err
		}
		rec.Account = acct.Name
		if err := tx.PutSession(hash, &rec); err != nil {
			return err
		}
		ended, err = capSessions(tx, acct.Name)
		return err
	})
	// Forget the ended sessions; a check that read one before the commit
	// cannot cache it after this (the epoch moves on).
	for _, h := range ended {
		s.sessions.drop(h)
	}
	if err != nil {
		return nil, err
	}
	return &companydocs.Session{Token: token, ExpiresAt: rec.ExpiresAt}, nil
}

// Authenticate returns the account of a live session token. Unknown,
// expired and revoked tokens are unauthorized, each with its own sentence.
// Live sessions are answered from memory after their first check.
func (s *Accounts) Authenticate(ctx context.Context, token string) (string, error) {
	hash := sha256.Sum256([]byte(token))
	now := s.now()
	if account, ok := s.sessions.get(hash, now); ok {
		return account, nil
	}
	epoch := s.sessions.currentEpoch()
	var rec *SessionRecord
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		rec, err = getSession(tx, hash)
		return err
	})
	if err != nil {
		return "", err
	}
	switch {
	case rec.Revoked && rec.EndedBy == endedByKeyRotation:
		return "", companydocs.Refusal(companydocs.EUNAUTHORIZED, "refusal.session_key_replaced", nil)
	case rec.Revoked:
		return "", companydocs.Refusal(companydocs.EUNAUTHORIZED, "refusal.session_ended", nil).WithHint(companydocs.HintCreateSession)
	case !now.Before(rec.ExpiresAt):
		return "", companydocs.Refusal(companydocs.EUNAUTHORIZED, "refusal.session_expired", companydocs.Args{"expires_at": rec.ExpiresAt.Format(time.RFC3339)}).WithHint(companydocs.HintCreateSession)
	}
	s.sessions.put(hash, rec, epoch, now)
	return rec.Account, nil
}

// RevokeSession ends a session. The record is kept, marked revoked, until
// it would have expired, so that a client using it learns why it fails.
func (s *Accounts) RevokeSession(ctx context.Context, token string) error {
	hash := sha256.Sum256([]byte(token))
	s.sessions.drop(hash)
	defer s.sessions.drop(hash) // what was read while the revocation committed
	return s.store.Update(ctx, func(tx Tx) error {
		rec, err := getSession(tx, hash)
		if err != nil {
			return err
		}
		rec.Revoked = true
		return tx.PutSession(hash, rec)
	})
}

// getSession reads a session, or unauthorized.
func getSession(tx Tx, hash [32]byte) (*SessionRecord, error) {
	rec, err := tx.Session(hash)
	if err == nil && rec == nil {
		err = companydocs.Refusal(companydocs.EUNAUTHORIZED, "refusal.session_unknown", companydocs.Args{"max_sessions": maxSessionsPerAccount}).WithHint(companydocs.HintCreateSession)
	}
	return rec, err
}

// maxSessionsPerAccount is companydocs.MaxSessionsPerAccount. Expired and
// revoked sessions not yet swept count too, and being the oldest they are
// the first to go.
const maxSessionsPerAccount = companydocs.MaxSessionsPerAccount

// capSessions deletes the oldest sessions of an account beyond
// maxSessionsPerAccount and returns their hashes.
func capSessions(tx Tx, account string) ([][32]byte, error) {
	n, err := tx.CountSessions(account)
	if err != nil || n <= maxSessionsPerAccount {
		return nil, err
	}
	ended, err := tx.OldestSessions(account, n-maxSessionsPerAccount)
	if err != nil {
		return nil, err
	}
	return ended, tx.DeleteSessions(ended)
}
