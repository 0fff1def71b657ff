package companydocs

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCheckLength: a text is counted in characters, accepted at its cap
// and refused one over it with validation_error naming the field and the
// cap, never shortened.
func TestCheckLength(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		limit       int
		refused     bool
	}{
		{"empty", "", 3, false},
		{"ASCII at the cap", "abc", 3, false},
		{"ASCII one over", "abcd", 3, true},
		{"two-byte characters at the cap", "äöü", 3, false},
		{"two-byte characters one over", "äöüß", 3, true},
		{"a byte that is not UTF-8 counts as one", "ab\xff", 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLength("note", tc.value, tc.limit)
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if ErrorCode(err) != EVALIDATION || !strings.Contains(err.Error(), `Field "note" is longer than 3 characters`) {
				t.Fatalf("error %v, want validation_error naming the field and the cap", err)
			}
		})
	}
	err := CheckHeaderLength("Idempotency-Key", strings.Repeat("k", MaxIdempotencyKey+1), MaxIdempotencyKey)
	if ErrorCode(err) != EVALIDATION || !strings.Contains(err.Error(), "The Idempotency-Key header is longer than 255 characters") {
		t.Errorf("header: %v", err)
	}
}

// TestShorten: a text is cut to at most n characters with "…" as the
// last, never inside a character, whatever its bytes; shorter texts stay.
func TestShorten(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"Müller GmbH", 20, "Müller GmbH"},
		{"Müller GmbH", 11, "Müller GmbH"},
		{"Müller GmbH", 4, "Mül…"},
		{"ääää", 2, "ä…"},
		{"日本語のテキスト", 3, "日本…"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
		{"a\xffb\xffc", 3, "a\ufffd…"},
	} {
		got := Shorten(c.in, c.n)
		if got != c.want || !utf8.ValidString(got) || utf8.RuneCountInString(got) > max(c.n, 0) {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestSizeText: whole MiB and KiB are written so, anything else in
// bytes, never rounded.
func TestSizeText(t *testing.T) {
	for n, want := range map[int]string{
		256 << 10: "256 KiB", 64 << 10: "64 KiB", 1 << 10: "1 KiB", 1 << 20: "1 MiB", 20 << 20: "20 MiB",
		1536 << 10: "1536 KiB", 1000: "1000 bytes", 1025: "1025 bytes", 0: "0 bytes",
	} {
		if got := SizeText(n); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
