package ingest

import "companydocs"

// maxFieldBytes bounds one text field of a record: a name, a former name,
// the seat, the address, an officer's name, position or city. The longest
// real ones are under a kilobyte (a name of 844 characters, an officer of
// 1,156); a field many times longer is no company's, and indexing it
// would cost memory in proportion (its words, and whole-value terms such
// as the normalised name, of its full length).
const maxFieldBytes = 16 << 10

// ReasonFieldTooLong counts records skipped for an oversized field.
const ReasonFieldTooLong = "text field longer than 16 KiB"

// textField is a field of a record, named for the skip's detail.
type textField struct{ name, value string }

// oversizedProfile returns the skip of a profile with a field over
// maxFieldBytes, or nil.
func oversizedProfile(p *companydocs.Profile) *SkipError {
	if p == nil {
		return nil
	}
	fields := []textField{{"name", p.Name}, {"seat", p.Seat}, {"address", p.Address}}
	for _, prev := range p.PreviousNames {
		fields = append(fields, textField{"former name", prev})
	}
	for _, o := range p.Officers {
		fields = append(fields, textField{"officer", o.Name}, textField{"officer position", o.Position}, textField{"officer city", o.City})
	}
	return oversized(fields)
}

// oversizedGLEIF is oversizedProfile for a GLEIF record.
func oversizedGLEIF(r *GLEIFRecord) *SkipError {
	if r == nil {
		return nil
	}
	return oversized([]textField{{"legal name", r.LegalName}, {"city", r.City}})
}

func oversized(fields []textField) *SkipError {
	for _, f := range fields {
		if len(f.value) > maxFieldBytes {
			return skipf(ReasonFieldTooLong, "%s of %d bytes", f.name, len(f.value))
		}
	}
	return nil
}
