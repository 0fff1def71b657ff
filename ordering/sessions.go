package ordering

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"companydocs"

	bolt "go.etcd.io/bbolt"
)

// sessionRecord is the stored form of a session; the key is the token hash.
type sessionRecord struct {
	Account   string    `json:"account"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Revoked   bool      `json:"revoked,omitempty"`
}

// CreateSession exchanges an API key for a session token valid for the
// configured TTL. Expired sessions are removed on the way.
func (s *Service) CreateSession(ctx context.Context, apiKey string) (*companydocs.Session, error) {
	if apiKey == "" {
		return nil, companydocs.Errorf(companydocs.EVALIDATION, `Field "api_key" is required: send {"api_key": "cdk_..."}.`)
	}
	token := newSecret(sessionTokenPrefix)
	now := s.now().UTC()
	rec := sessionRecord{CreatedAt: now, ExpiresAt: now.Add(s.ttl)}
	err := s.db.Update(func(tx *bolt.Tx) error {
		acct, err := accountForKey(tx, apiKey)
		if err != nil {
			return err
		}
		rec.Account = acct.Name
		if err := pruneSessions(tx, now, pruneBatch); err != nil {
			return err
		}
		return putSession(tx, hashSecret(token), &rec)
	})
	if err != nil {
		return nil, err
	}
	return &companydocs.Session{Token: token, ExpiresAt: rec.ExpiresAt}, nil
}

// Authenticate returns the account of a live session token. Unknown,
// expired and revoked tokens are unauthorized, each with its own sentence.
// Live sessions are answered from memory after their first check.
func (s *Service) Authenticate(ctx context.Context, token string) (string, error) {
	hash := sha256.Sum256([]byte(token))
	now := s.now()
	if account, ok := s.sessions.get(hash, now); ok {
		return account, nil
	}
	epoch := s.sessions.currentEpoch()
	var rec *sessionRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		rec, err = getSession(tx, token)
		return err
	})
	if err != nil {
		return "", err
	}
	switch {
	case rec.Revoked:
		return "", companydocs.Errorf(companydocs.EUNAUTHORIZED, "This session was ended. Create a new session with POST /api/v1/auth/sessions/.")
	case !now.Before(rec.ExpiresAt):
		return "", companydocs.Errorf(companydocs.EUNAUTHORIZED, "This session expired at %s. Create a new session with POST /api/v1/auth/sessions/.", rec.ExpiresAt.Format(time.RFC3339))
	}
	s.sessions.put(hash, rec, epoch)
	return rec.Account, nil
}

// RevokeSession ends a session. The record is kept, marked revoked, until
// it would have expired, so that a client using it learns why it fails.
func (s *Service) RevokeSession(ctx context.Context, token string) error {
	hash := sha256.Sum256([]byte(token))
	s.sessions.drop(hash)
	defer s.sessions.drop(hash) // what was read while the revocation committed
	return s.db.Update(func(tx *bolt.Tx) error {
		rec, err := getSession(tx, token)
		if err != nil {
			return err
		}
		rec.Revoked = true
		return putSession(tx, hash[:], rec)
	})
}

func getSession(tx *bolt.Tx, token string) (*sessionRecord, error) {
	v := tx.Bucket(bucketSessions).Get(hashSecret(token))
	if v == nil {
		return nil, companydocs.Errorf(companydocs.EUNAUTHORIZED, "The session token is not known. Create a session with POST /api/v1/auth/sessions/ and send it as Authorization: Bearer <token>.")
	}
	var rec sessionRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	return &rec, nil
}

func putSession(tx *bolt.Tx, hash []byte, rec *sessionRecord) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode session: %w", err)
	}
	if err := tx.Bucket(bucketSessions).Put(hash, v); err != nil {
		return fmt.Errorf("store session: %w", err)
	}
	return nil
}

// pruneBatch bounds the sessions examined per pruning pass, so that
// creating a session stays cheap however many sessions exist.
const pruneBatch = 64

// pruneSessions deletes expired sessions among up to max sessions, starting
// at a random point of the key space and wrapping around once (keys are
// hashes, so every pass looks at a different stretch).
func pruneSessions(tx *bolt.Tx, now time.Time, max int) error {
	c := tx.Bucket(bucketSessions).Cursor()
	start := hashSecret(newSecret(""))
	k, v := c.Seek(start)
	wrapped := false
	for i := 0; i < max; i++ {
		if k == nil && !wrapped {
			k, v = c.First()
			wrapped = true
		}
		if k == nil || (wrapped && bytes.Compare(k, start) >= 0) {
			return nil
		}
		var rec sessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode session: %w", err)
		}
		if now.Before(rec.ExpiresAt) {
			k, v = c.Next()
			continue
		}
		deleted := append([]byte(nil), k...)
		if err := c.Delete(); err != nil {
			return fmt.Errorf("delete expired session: %w", err)
		}
		// After Delete a cursor's Next may skip a key: seek instead.
		k, v = c.Seek(deleted)
	}
	return nil
}
