package ordering

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"companydocs"
)

// Prefixes of secrets, so that a leaked one is recognisable in logs and
// secret scanners.
const (
	apiKeyPrefix       = "cdk_"
	sessionTokenPrefix = "cds_"
)

// DemoAccount is the account `serve --demo` creates.
const DemoAccount = "demo"

// DemoCredits is the balance the demo account starts with.
const DemoCredits = 100

var accountNamePattern = regexp.MustCompile(fmt.Sprintf(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,%d}$`, companydocs.MaxAccountName-1))

// Account is a client of the service as operators see it. The API key is
// not part of it: only its hash is stored.
type Account struct {
	Name      string    `json:"name"`
	Credits   int64     `json:"credits"`
	CreatedAt time.Time `json:"created_at"`
	// Role is companydocs.RoleClient or RoleOperator; accounts stored
	// before roles existed have none and are clients.
	Role string `json:"role,omitempty"`
}

// AccountRecord is the stored form of an account.
type AccountRecord struct {
	Account
	KeyHash []byte `json:"key_hash"`
}

// CreateAccount creates an account with a starting balance and returns its
// API key. The key is shown only here: the database keeps its hash.
func (s *Accounts) CreateAccount(name string, credits int64) (apiKey string, err error) {
	return s.CreateAccountWithRole(name, companydocs.RoleClient, credits)
}

// CreateAccountWithRole creates a client or an operator account. A role
// never changes afterwards, so that it can be cached.
func (s *Accounts) CreateAccountWithRole(name, role string, credits int64) (apiKey string, err error) {
	if role != companydocs.RoleClient && role != companydocs.RoleOperator {
		return "", companydocs.Refusal(companydocs.EVALIDATION, "refusal.unknown_role", companydocs.Args{"role": role, "client": companydocs.RoleClient, "operator": companydocs.RoleOperator})
	}
	if err := companydocs.CheckLength("name", name, companydocs.MaxAccountName); err != nil {
		return "", err // before the name is repeated in a sentence
	}
	if !accountNamePattern.MatchString(name) {
		return "", companydocs.Refusal(companydocs.EVALIDATION, "refusal.bad_account_name", companydocs.Args{"name": name, "max": companydocs.MaxAccountName})
	}
	if credits < 0 {
		return "", companydocs.Refusal(companydocs.EVALIDATION, "refusal.negative_credits", nil)
	}
	apiKey = newSecret(apiKeyPrefix)
	rec := AccountRecord{Account: Account{Name: name, Credits: credits, CreatedAt: s.now().UTC(), Role: role}, KeyHash: hashSecret(apiKey)}
	err = s.store.Update(context.Background(), func(tx Tx) error {
		return tx.CreateAccount(&rec)
	})
	if errors.Is(err, ErrExists) {
		return "", companydocs.Refusal(companydocs.EVALIDATION, "refusal.account_exists", companydocs.Args{"name": name})
	}
	if err != nil {
		return "", err
	}
	return apiKey, nil
}

func (r *AccountRecord) EffectiveRole() string {
	if r.Role == "" {
		return companydocs.RoleClient
	}
	return r.Role
}

// roleOf returns the role of an account, from memory after the first
// look-up (roles never change and accounts are never deleted).
func (s *core) roleOf(account string) (string, error) {
	if r, ok := s.roles.Load(account); ok {
		return r.(string), nil
	}
	var role string
	err := s.store.View(context.Background(), func(tx Tx) error {
		rec, err := getAccount(tx, account)
		if err == nil {
			role = rec.EffectiveRole()
		}
		return err
	})
	if err != nil {
		return "", err
	}
	s.roles.Store(account, role)
	return role, nil
}

// AccountSummary shows an account to itself: name, role, balance, the
// ids of the plans it may order with (every configured plan for a
// client; none for an operator, who does not order) and its watches
// with their limit. A session shows
// only its own account, so there is nothing else to authorize.
func (s *Orders) AccountSummary(ctx context.Context, account string) (*companydocs.AccountSummary, error) {
	var out *companydocs.AccountSummary
	err := s.store.View(ctx, func(tx Tx) error {
		rec, err := getAccount(tx, account)
		if err == nil {
			out = &companydocs.AccountSummary{Name: rec.Name, Role: rec.EffectiveRole(), Credits: rec.Credits, Plans: []string{}}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.Role == companydocs.RoleClient {
		out.Plans = s.plans.ids()
	}
	if out.Watches, err = s.watches.WatchCount(ctx, account); err != nil {
		return nil, err
	}
	return out, nil
}

// requireRole is the authorization of every order operation: clients
// preview, create, list, cancel and download their own orders; operators
// run the queue. The other role is forbidden.
func (s *core) requireRole(account, role string) error {
	got, err := s.roleOf(account)
	if err != nil {
		return err
	}
	if got != role {
		if role == companydocs.RoleOperator {
			return companydocs.Refusal(companydocs.EFORBIDDEN, "refusal.operators_only", companydocs.Args{"account": account})
		}
		return companydocs.Refusal(companydocs.EFORBIDDEN, "refusal.clients_only", companydocs.Args{"account": account})
	}
	return nil
}

// rotateKey gives the account apiKey. Replacing a key ends every session
// made with the old one, in the same transaction: a key is rotated
// because it may be known to someone it should not be, and a session of
// theirs would otherwise outlive it by up to the session TTL. It returns
// the ended sessions' hashes for the caller to drop from the cache after
// the commit.
func rotateKey(tx Tx, account, apiKey string) ([][32]byte, error) {
	ended, err := tx.RevokeSessions(account, endedByKeyRotation)
	if err != nil {
		return nil, err
	}
	return ended, tx.SetAccountKey(account, hashSecret(apiKey))
}

// All lists every account in name order.
func (s *Accounts) All() ([]Account, error) {
	var recs []AccountRecord
	err := s.store.View(context.Background(), func(tx Tx) (err error) {
		recs, err = tx.Accounts()
		return err
	})
	out := make([]Account, len(recs))
	for i, rec := range recs {
		rec.Role = rec.EffectiveRole()
		out[i] = rec.Account
	}
	return out, err
}

// Account returns one account, or not_found.
func (s *Accounts) Account(name string) (*Account, error) {
	var out *Account
	err := s.store.View(context.Background(), func(tx Tx) error {
		rec, err := getAccount(tx, name)
		if err == nil {
			rec.Role = rec.EffectiveRole()
			out = &rec.Account
		}
		return err
	})
	return out, err
}

// AddCredits changes an account's balance by n (negative n takes credits
// away, but never below zero).
func (s *Accounts) AddCredits(name string, n int64) error {
	return s.store.Update(context.Background(), func(tx Tx) error {
		rec, err := getAccount(tx, name)
		switch {
		case err != nil:
			return err
		case n > 0 && rec.Credits > math.MaxInt64-n:
			return companydocs.Refusal(companydocs.EVALIDATION, "refusal.credits_overflow", companydocs.Args{"name": name})
		case n < 0 && rec.Credits+n < 0: // not -n, which overflows for the smallest int64
			return companydocs.Refusal(companydocs.EINSUFFICIENTFUNDS, "refusal.credits_below_zero", companydocs.Args{"name": name, "balance": rec.Credits, "loss": uint64(-n)})
		case n != 0:
			_, err = tx.AddCredits(name, n)
		}
		return err
	})
}

// EnsureDemoAccount creates the demo account with credits on first use, in
// the same transaction as its key.
// Because only the hash of a key is stored, a key cannot be shown twice: on
// every later call the demo key is rotated: the previous demo key and the
// sessions made with it stop working, and the new key is returned.
// created reports whether the account was new.
func (s *Accounts) EnsureDemoAccount(credits int64) (apiKey string, created bool, err error) {
	if credits < 0 {
		return "", false, companydocs.Refusal(companydocs.EVALIDATION, "refusal.negative_demo_credits", companydocs.Args{"credits": credits})
	}
	apiKey = newSecret(apiKeyPrefix)
	var ended [][32]byte
	err = s.store.Update(context.Background(), func(tx Tx) error {
		ended, created = nil, false
		rec, err := tx.Account(DemoAccount)
		if err != nil {
			return err
		}
		if rec == nil {
			created = true
			return tx.CreateAccount(&AccountRecord{Account: Account{Name: DemoAccount, Credits: credits, CreatedAt: s.now().UTC(), Role: companydocs.RoleClient}, KeyHash: hashSecret(apiKey)})
		}
		ended, err = rotateKey(tx, DemoAccount, apiKey)
		return err
	})
	for _, h := range ended {
		s.sessions.drop(h)
	}
	if err != nil {
		return "", false, err
	}
	return apiKey, created, nil
}

// IsDemoKey reports whether apiKey is the demo account's key now: serve
// --demo keeps a key across restarts of the same data directory when it
// still is.
func (s *Accounts) IsDemoKey(apiKey string) bool {
	if !strings.HasPrefix(apiKey, apiKeyPrefix) {
		return false
	}
	var name string
	err := s.store.View(context.Background(), func(tx Tx) error {
		rec, err := accountForKey(tx, apiKey)
		if err == nil {
			name = rec.Name
		}
		return err
	})
	return err == nil && name == DemoAccount
}

// accountForKey finds the account of an API key.
func accountForKey(tx Tx, apiKey string) (*AccountRecord, error) {
	h := hashSecret(apiKey)
	name, err := tx.AccountForKey(h)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, errUnknownKey()
	}
	rec, err := getAccount(tx, name)
	if err != nil {
		return nil, err
	}
	// The lookup above is by hash, so its timing reveals nothing useful
	// about the key; this comparison guards against a stale keys entry.
	if subtle.ConstantTimeCompare(rec.KeyHash, h) != 1 {
		return nil, errUnknownKey()
	}
	return rec, nil
}

func errUnknownKey() error {
	return companydocs.Refusal(companydocs.EUNAUTHORIZED, "refusal.api_key_unknown", nil)
}

// getAccount reads an account, or not_found.
func getAccount(tx Tx, name string) (*AccountRecord, error) {
	rec, err := tx.Account(name)
	if err == nil && rec == nil {
		err = errNoAccount(name)
	}
	return rec, err
}

func errNoAccount(name string) error {
	return companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_such_account", companydocs.Args{"name": name})
}

// newSecret returns prefix + 32 random bytes in unpadded base64url.
func newSecret(prefix string) string {
	var b [32]byte
	rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// hashSecret is how keys and tokens are stored. The secrets carry 256
// random bits, so a plain SHA-256 (no salt, no stretching) is enough.
func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
