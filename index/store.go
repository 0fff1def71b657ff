package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/register"
)

// Buckets of profiles.db. The secondary buckets map "<key>\x00<id>" to an
// empty value, so that adding or removing one entry never rewrites a list;
// a prefix scan over "<key>\x00" yields the ids.
var (
	bucketProfiles = []byte("profiles") // id -> MessagePack profile (encodeProfile)
	bucketNumbers  = []byte("numbers")  // "HRB|6684\x00<id>"
	bucketLEIs     = []byte("leis")     // "<LEI>\x00<id>"

	storeBuckets = [][]byte{bucketProfiles, bucketNumbers, bucketLEIs}
)

const keySep = 0

// numberKey is the secondary key of a register type and number, shared by
// every court, former court and suffix: "HRB|6684".
func numberKey(t register.Type, number string) string {
	return string(t) + "|" + strings.TrimSpace(number)
}

func indexEntry(key, id string) []byte {
	b := make([]byte, 0, len(key)+1+len(id))
	b = append(b, key...)
	b = append(b, keySep)
	return append(b, id...)
}

// secondaryKeys lists the number and LEI keys of p.
func secondaryKeys(p *companydocs.Profile) (numbers, leis []string) {
	if p.Ref.Type != "" && p.Ref.Number != "" {
		numbers = append(numbers, numberKey(p.Ref.Type, p.Ref.Number))
	}
	for _, l := range p.LEIs {
		if l.LEI != "" {
			leis = append(leis, string(l.LEI))
		}
	}
	return numbers, leis
}

// encodeProfile and decodeProfile define the value format of the profiles
// bucket: MessagePack with every struct as an array (field order instead of
// field names) and without the id, which is the key. On the real records a
// value is less than half its JSON (IndexVersion 4) and decodes six times
// faster (readProfile, BenchmarkDecodeProfile); the price is that the
// format follows the field order of companydocs.Profile, which
// TestProfileLayout ties to IndexVersion.
func encodeProfile(p *companydocs.Profile) ([]byte, error) {
	e := profileEncoders.Get().(*profileEncoder)
	defer profileEncoders.Put(e)
	e.buf.Reset()
	v := *p
	v.ID = ""
	if err := e.enc.Encode(&v); err != nil {
		return nil, fmt.Errorf("encode profile %q: %w", p.ID, err)
	}
	return bytes.Clone(e.buf.Bytes()), nil
}

// decodeProfile reads a value of the profiles bucket stored under id. It
// also reads the JSON values of IndexVersion 4 generations.
func decodeProfile(id string, b []byte) (*companydocs.Profile, error) {
	p := new(companydocs.Profile)
	var err error
	if len(b) > 0 && b[0] == '{' {
		err = json.Unmarshal(b, p)
	} else {
		err = readProfile(b, p)
	}
	if err != nil {
		return nil, fmt.Errorf("decode profile: %w", err)
	}
	p.ID = id
	// MessagePack keeps the instant, not the location: give back UTC, as
	// the ingest stores it.
	p.RetrievedAt = p.RetrievedAt.UTC()
	return p, nil
}

// Generations before IndexVersion 7 store each verification gap of a
// discovery profile as an English sentence (a MessagePack string); they
// are read as described gaps, so that a server keeps serving such a
// generation until the next ingest. (Their JSON, IndexVersion 4, is read
// by companydocs.VerificationGap.UnmarshalJSON.)
func init() {
	msgpack.Register(companydocs.VerificationGap{}, nil, decodeGap)
}

// storedGap is a VerificationGap without the decoder registered for it.
type storedGap companydocs.VerificationGap

func decodeGap(d *msgpack.Decoder, v reflect.Value) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	if msgpcode.IsString(c) {
		text, err := d.DecodeString()
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(companydocs.DescribedGap(text)))
		return nil
	}
	var g storedGap
	if err := d.Decode(&g); err != nil {
		return err
	}
	v.Set(reflect.ValueOf(companydocs.VerificationGap(g)))
	return nil
}

type profileEncoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

var profileEncoders = sync.Pool{New: func() any {
	e := new(profileEncoder)
	e.enc = msgpack.NewEncoder(&e.buf)
	e.enc.UseArrayEncodedStructs(true)
	e.enc.UseCompactInts(true)
	return e
}}

func createBuckets(tx *bolt.Tx) error {
	for _, name := range storeBuckets {
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
		// Profile ids are hashes and arrive in random order: leave room in
		// pages so inserts split less.
		b.FillPercent = 0.7
	}
	return nil
}

// getProfile reads one profile of a whole store (a build's, or a layer's
// own) inside tx; nil, nil when absent.
func getProfile(tx *bolt.Tx, id string) (*companydocs.Profile, error) {
	v := tx.Bucket(bucketProfiles).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	p, err := decodeProfile(id, v)
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", id, err)
	}
	return p, nil
}

// putProfile stores p, encoded as v (encodeProfile), replacing old (the
// profile stored under p.ID before, or nil) and its secondary entries.
func putProfile(tx *bolt.Tx, p *companydocs.Profile, v []byte, old *companydocs.Profile) error {
	if old != nil {
		if err := updateSecondary(tx, old, (*bolt.Bucket).Delete); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketProfiles).Put([]byte(p.ID), v); err != nil {
		return fmt.Errorf("put profile %q: %w", p.ID, err)
	}
	return updateSecondary(tx, p, func(b *bolt.Bucket, k []byte) error { return b.Put(k, nil) })
}

func updateSecondary(tx *bolt.Tx, p *companydocs.Profile, op func(*bolt.Bucket, []byte) error) error {
	numbers, leis := secondaryKeys(p)
	for _, k := range numbers {
		if err := op(tx.Bucket(bucketNumbers), indexEntry(k, p.ID)); err != nil {
			return fmt.Errorf("number entry of %q: %w", p.ID, err)
		}
	}
	for _, k := range leis {
		if err := op(tx.Bucket(bucketLEIs), indexEntry(k, p.ID)); err != nil {
			return fmt.Errorf("LEI entry of %q: %w", p.ID, err)
		}
	}
	return nil
}

// profilesByKey loads every profile listed under key in a secondary bucket.
func profilesByKey(tx *bolt.Tx, bucket []byte, key string) ([]*companydocs.Profile, error) {
	prefix := indexEntry(key, "")
	var out []*companydocs.Profile
	c := tx.Bucket(bucket).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := string(k[len(prefix):])
		p, err := getProfile(tx, id)
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, fmt.Errorf("%s entry %q names missing profile %q", bucket, key, id)
		}
		out = append(out, p)
	}
	return out, nil
}
