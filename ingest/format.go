package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Format names an input file format.
type Format string

// Formats the readers understand. FormatAuto asks for detection from content.
const (
	FormatAuto           Format = ""
	FormatOffeneRegister Format = "offeneregister"
	FormatCanonical      Format = "canonical"
	FormatGLEIFCSV       Format = "gleif-csv"
	FormatGLEIFJSON      Format = "gleif-json"
)

// Formats lists every concrete format, for flag help and validation.
var Formats = []Format{FormatOffeneRegister, FormatCanonical, FormatGLEIFCSV, FormatGLEIFJSON}

// ParseFormat accepts a format name as given to --format; "" and "auto"
// mean detection from content.
func ParseFormat(s string) (Format, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || s == "auto" {
		return FormatAuto, nil
	}
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return FormatAuto, fmt.Errorf("unknown format %q (want auto, %s)", s, formatList())
}

func formatList() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// IsRegistry reports whether f carries register entries (as opposed to
// GLEIF records, which are linked to them).
func (f Format) IsRegistry() bool {
	return f == FormatOffeneRegister || f == FormatCanonical
}

// IsGLEIF reports whether f carries GLEIF LEI records.
func (f Format) IsGLEIF() bool {
	return f == FormatGLEIFCSV || f == FormatGLEIFJSON
}

// sniffLine detects the format from the first non-empty line of a file.
func sniffLine(line []byte) (Format, bool) {
	line = bytes.TrimSpace(bytes.TrimPrefix(line, utf8BOM))
	if len(line) == 0 {
		return FormatAuto, false
	}
	if line[0] == '{' {
		return sniffJSONLine(line)
	}
	return sniffCSVHeader(line)
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// sniffJSONLine looks at the keys of a JSON object line.
func sniffJSONLine(line []byte) (Format, bool) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(line, &keys); err != nil {
		return FormatAuto, false
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("format"):
		var f string
		if json.Unmarshal(keys["format"], &f) == nil && f == CanonicalFormatVersion {
			return FormatCanonical, true
		}
	case has("company_number") && (has("all_attributes") || has("jurisdiction_code")):
		return FormatOffeneRegister, true
	case has("lei") && has("entity_legal_name_name"):
		return FormatGLEIFJSON, true
	case has("register_type") && has("register_number") && has("name"):
		return FormatCanonical, true
	}
	return FormatAuto, false
}

// sniffCSVHeader accepts a GLEIF golden-copy header: it names the columns
// LEI and Entity.LegalName.
func sniffCSVHeader(line []byte) (Format, bool) {
	s := string(line)
	if strings.Contains(s, "Entity.LegalName") && strings.Contains(s, "LEI") {
		return FormatGLEIFCSV, true
	}
	return FormatAuto, false
}
