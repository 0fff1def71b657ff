package ordering

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"strings"
)

// crockford is the base32 alphabet of order ids; its characters are in
// ASCII order, so ids compare like the bytes they encode.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// orderIDPrefix starts every order id.
const orderIDPrefix = "ord_"

// orderIDLength is the length of an order id: prefix + 26 characters.
const orderIDLength = len(orderIDPrefix) + 26

// next returns a new order id, greater than every id issued before by g.
func (g *idGenerator) next() string {
	return g.nextWithPrefix(orderIDPrefix)
}

// nextWithPrefix returns a new id with the given prefix.
func (g *idGenerator) nextWithPrefix(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(g.now().UnixMilli())<<16)
	rand.Read(b[6:])
	g.mu.Lock()
	if bytes.Compare(b[:], g.last[:]) <= 0 {
		b = g.last
		increment(b[:])
	}
	g.last = b
	g.mu.Unlock()
	return prefix + encodeID(b)
}

// increment adds one to the big-endian number in b.
func increment(b []byte) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return
		}
	}
}

// encodeID writes 128 bits as 26 base32 characters, most significant first
// (the first character carries the top 3 bits).
func encodeID(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// validOrderID reports whether s has the shape of an order id.
func validOrderID(s string) bool {
	rest, ok := strings.CutPrefix(s, orderIDPrefix)
	if !ok || len(rest) != 26 || rest[0] > '7' {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(crockford, rest[i]) < 0 {
			return false
		}
	}
	return true
}
