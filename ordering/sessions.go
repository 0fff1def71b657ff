package ordering

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"companydocs"

	bolt "go.etcd.io/bbolt"
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
func (s *Service) CreateSession(ctx context.Context, apiKey string) (*companydocs.Session, error) {
	if apiKey == "" {
		return nil, companydocs.Errorf(companydocs.EVALIDATION, `Field "api_key" is required: send {"api_key": "cdk_..."}.`)
	}
	token := newSecret(sessionTokenPrefix)
	now := s.now().UTC()
	rec := SessionRecord{CreatedAt: now, ExpiresAt: now.Add(s.ttl)}
	var ended [][32]byte
	err := s.db.Update(func(tx *bolt.Tx) error {
		acct, err := accountForKey(tx, apiKey)
		if err != nil {
			return err
		}
		rec.Account = acct.Name
		if err := putSession(tx, hashSecret(token), &rec); err != nil {
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
func (s *Service) Authenticate(ctx context.Context, token string) (string, error) {
	hash := sha256.Sum256([]byte(token))
	now := s.now()
	if account, ok := s.sessions.get(hash, now); ok {
		return account, nil
	}
	epoch := s.sessions.currentEpoch()
	var rec *SessionRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		rec, err = getSession(tx, token)
		return err
	})
	if err != nil {
		return "", err
	}
	switch {
	case rec.Revoked && rec.EndedBy == endedByKeyRotation:
		return "", companydocs.Errorf(companydocs.EUNAUTHORIZED, "This session ended because the API key of its account was replaced. Create a new session with the new key.")
	case rec.Revoked:
		return "", companydocs.Errorf(companydocs.EUNAUTHORIZED, "This session was ended. Create a new session with the API key.").WithHint(companydocs.HintCreateSession)
	case !now.Before(rec.ExpiresAt):
		return "", companydocs.Errorf(companydocs.EUNAUTHORIZED, "This session expired at %s. Create a new session with the API key.", rec.ExpiresAt.Format(time.RFC3339)).WithHint(companydocs.HintCreateSession)
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

func getSession(tx *bolt.Tx, token string) (*SessionRecord, error) {
	v := tx.Bucket(bucketSessions).Get(hashSecret(token))
	if v == nil {
		return nil, companydocs.Errorf(companydocs.EUNAUTHORIZED, "The session token is not known: it is mistyped, it expired some time ago, or it ended because its account created more than %d newer sessions. Create a session with the API key.", maxSessionsPerAccount).WithHint(companydocs.HintCreateSession)
	}
	var rec SessionRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	return &rec, nil
}

// putSession stores a session and its entry in the account's index.
func putSession(tx *bolt.Tx, hash []byte, rec *SessionRecord) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode session: %w", err)
	}
	if err := tx.Bucket(bucketSessions).Put(hash, v); err != nil {
		return fmt.Errorf("store session: %w", err)
	}
	if err := tx.Bucket(bucketAccountSessions).Put(accountSessionKey(rec, hash), nil); err != nil {
		return fmt.Errorf("index session: %w", err)
	}
	return nil
}

// deleteSession removes a session and its index entry.
func deleteSession(tx *bolt.Tx, hash []byte, rec *SessionRecord) error {
	if err := tx.Bucket(bucketAccountSessions).Delete(accountSessionKey(rec, hash)); err != nil {
		return fmt.Errorf("delete session index entry: %w", err)
	}
	if err := tx.Bucket(bucketSessions).Delete(hash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// accountSessionKey is the key of a session in bucketAccountSessions:
// account 0 creation time (8 bytes, big-endian Unix nanoseconds) token
// hash, so that an account's sessions are one key range, oldest first.
func accountSessionKey(rec *SessionRecord, hash []byte) []byte {
	k := make([]byte, 0, len(rec.Account)+1+8+len(hash))
	k = append(k, rec.Account...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(rec.CreatedAt.UnixNano()))
	return append(k, hash...)
}

// maxSessionsPerAccount bounds the sessions one account keeps. A client
// needs one session per process and renews it once per TTL, so 100 leaves
// room for a fleet of workers on one key; a client that creates a session
// per request, or a leaked key run in a loop, ends its own oldest sessions
// instead of growing orders.db. Expired and revoked sessions not yet swept
// count too, and being the oldest they are the first to go.
const maxSessionsPerAccount = 100

// capSessions deletes the oldest sessions of an account beyond
// maxSessionsPerAccount and returns their hashes. It reads at most
// maxSessionsPerAccount+1 index keys in the usual case of one new session.
func capSessions(tx *bolt.Tx, account string) ([][32]byte, error) {
	prefix := append([]byte(account), 0)
	c := tx.Bucket(bucketAccountSessions).Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	if len(keys) <= maxSessionsPerAccount {
		return nil, nil
	}
	var ended [][32]byte
	for _, k := range keys[:len(keys)-maxSessionsPerAccount] {
		var h [32]byte
		copy(h[:], k[len(k)-len(h):])
		if err := tx.Bucket(bucketAccountSessions).Delete(k); err != nil {
			return nil, fmt.Errorf("delete session index entry: %w", err)
		}
		if err := tx.Bucket(bucketSessions).Delete(h[:]); err != nil {
			return nil, fmt.Errorf("delete session: %w", err)
		}
		ended = append(ended, h)
	}
	return ended, nil
}

// endSessions marks every live session of account revoked, keeping the
// records (as RevokeSession does) so that a client learns why its token
// fails. It returns their hashes.
func endSessions(tx *bolt.Tx, account, why string) ([][32]byte, error) {
	prefix := append([]byte(account), 0)
	c := tx.Bucket(bucketAccountSessions).Cursor()
	var hashes [][32]byte
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		var h [32]byte
		copy(h[:], k[len(k)-len(h):])
		hashes = append(hashes, h)
	}
	for _, h := range hashes {
		v := tx.Bucket(bucketSessions).Get(h[:])
		if v == nil {
			continue
		}
		var rec SessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return nil, fmt.Errorf("decode session: %w", err)
		}
		if rec.Revoked {
			continue
		}
		rec.Revoked, rec.EndedBy = true, why
		if err := putSession(tx, h[:], &rec); err != nil {
			return nil, err
		}
	}
	return hashes, nil
}

// indexSessions builds bucketAccountSessions for a database written before
// the index existed; Open runs it once, in the transaction that creates
// the bucket.
func indexSessions(tx *bolt.Tx) error {
	index := tx.Bucket(bucketAccountSessions)
	return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
		var rec SessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode session: %w", err)
		}
		return index.Put(accountSessionKey(&rec, k), nil)
	})
}
