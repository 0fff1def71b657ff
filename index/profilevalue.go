package index

import (
	"errors"

	"github.com/tinylib/msgp/msgp"
	"github.com/vmihailenco/msgpack/v5"

	"companydocs"
	"companydocs/register"
)

// readProfile decodes a profile value (encodeProfile) field by field, in
// the order of companydocs.Profile's fields, with msgp's readers of a
// byte slice. msgpack.Unmarshal, which wrote it, decodes through
// reflection and copies every string twice; a search decodes every
// profile it ranks, 30 to 200, and this costs half as much. The strings
// of a profile share one copy of the value instead of one allocation
// each. It decodes what Unmarshal decodes, field for field, the instant
// in UTC (TestReadProfileAgreesWithUnmarshal, FuzzReadProfile), and like
// it refuses a struct of another field count. A discovery record's details, found on few
// profiles and with the gaps of older generations to read (decodeGap), go
// through Unmarshal.
func readProfile(b []byte, p *companydocs.Profile) error {
	r := valueReader{rest: b, whole: string(b), size: cap(b)}
	r.profile(p)
	return r.err
}

// A valueReader reads one profile value; the first error stops it and is
// kept.
type valueReader struct {
	rest  []byte // what is left to read
	whole string // the value, which the strings read are cut from
	size  int    // the capacity of its slice
	err   error
}

var errFieldCount = errors.New("msgpack: number of fields in array-encoded struct has changed")

func (r *valueReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// fields reads the length of a struct's array and reports whether the
// struct follows (false for nil, which leaves it zero); another count than
// want is an error, as for Unmarshal.
func (r *valueReader) fields(want int) bool {
	n := r.arrayLen()
	if n > 0 && n != want {
		r.fail(errFieldCount)
	}
	return n > 0 && r.err == nil
}

// arrayLen reads an array's length, -1 for nil.
func (r *valueReader) arrayLen() int {
	if r.err != nil || r.null() {
		return -1
	}
	n, rest, err := msgp.ReadArrayHeaderBytes(r.rest)
	r.rest = rest
	r.fail(err)
	return int(n)
}

// null reads a nil if one is next.
func (r *valueReader) null() bool {
	if msgp.IsNil(r.rest) {
		r.rest = r.rest[1:]
		return true
	}
	return false
}

// str reads a string, "" for nil, as a part of the whole value.
func (r *valueReader) str() string {
	if r.err != nil || r.null() {
		return ""
	}
	v, rest, err := msgp.ReadStringZC(r.rest)
	if err != nil {
		r.fail(err)
		return ""
	}
	r.rest = rest
	if len(v) == 0 {
		return ""
	}
	// v lies in the value: its offset is what its capacity lacks
	at := r.size - cap(v)
	return r.whole[at : at+len(v)]
}

func (r *valueReader) boolean() bool {
	if r.err != nil {
		return false
	}
	v, rest, err := msgp.ReadBoolBytes(r.rest)
	r.rest = rest
	r.fail(err)
	return v
}

// slice returns a slice of the array's length, nil for a nil array, as
// Unmarshal makes it. A damaged value may claim billions of elements:
// every element takes a byte at least, so a length beyond the bytes left
// is an error, not an allocation.
func slice[T any](r *valueReader) []T {
	n := r.arrayLen()
	if n < 0 || r.err != nil {
		return nil
	}
	if n > len(r.rest) {
		r.fail(errShortValue)
		return nil
	}
	return make([]T, n)
}

var errShortValue = errors.New("msgpack: array longer than the value")

func (r *valueReader) profile(p *companydocs.Profile) {
	if !r.fields(16) {
		return
	}
	p.ID = r.str()
	p.Source = r.str()
	if r.fields(5) {
		p.Ref = register.Ref{Court: r.str(), FormerCourt: r.str(), Type: register.Type(r.str()), Number: r.str(), Suffix: r.str()}
	}
	p.Name, p.LegalForm, p.Seat, p.Address, p.FederalState = r.str(), r.str(), r.str(), r.str(), r.str()
	p.Officers = slice[companydocs.Officer](r)
	for i := range p.Officers {
		r.officer(&p.Officers[i])
	}
	p.PreviousNames = slice[string](r)
	for i := range p.PreviousNames {
		p.PreviousNames[i] = r.str()
	}
	p.Removed = r.boolean()
	p.Documents = slice[companydocs.DocumentType](r)
	for i := range p.Documents {
		p.Documents[i] = companydocs.DocumentType(r.str())
	}
	p.LEIs = slice[companydocs.LEILink](r)
	for i := range p.LEIs {
		if r.fields(4) {
			p.LEIs[i] = companydocs.LEILink{LEI: register.LEI(r.str()), LegalName: r.str(), Method: r.str(), Status: r.str()}
		}
	}
	p.Verified = r.boolean()
	p.Discovery = r.discovery()
	if r.err == nil {
		t, rest, err := msgp.ReadTimeUTCBytes(r.rest)
		r.rest = rest
		r.fail(err)
		p.RetrievedAt = t
	}
}

func (r *valueReader) officer(o *companydocs.Officer) {
	if r.fields(8) {
		*o = companydocs.Officer{Name: r.str(), FirstName: r.str(), LastName: r.str(), Position: r.str(),
			City: r.str(), StartDate: r.str(), EndDate: r.str(), Dismissed: r.boolean()}
	}
}

func (r *valueReader) discovery() *companydocs.Discovery {
	if r.err != nil || r.null() {
		return nil
	}
	rest, err := msgp.Skip(r.rest)
	if err != nil {
		r.fail(err)
		return nil
	}
	var d *companydocs.Discovery
	r.fail(msgpack.Unmarshal(r.rest[:len(r.rest)-len(rest)], &d))
	r.rest = rest
	return d
}
