package search

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/messages"
	"companydocs/resolver"
)

// TestResolveSaysWhyNoCandidate resolves a sheet of clues that name no
// company of the sample's register (name words no company bears, an LEI
// and a register number no entry carries, a letter alone, a legal form
// alone) and one that does, in English and German: each row without a
// candidate has its search's notes in its reasons cell, said in the run's
// language, the code it is expected to say among them; the found row has
// its candidate's reasons.
func TestResolveSaysWhyNoCandidate(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	rows := [][]string{{"Firma"}, {"Quarkbrötchen Zwiebelkuchen Xylophon"}, {"529900ZZZQUARKZ00028"}, {"HRB 999999 München"}, {"q"}, {"GmbH"}, {recs[0].Name}}
	codes := []string{resolver.NoteNameWordsUnknown, resolver.NoteLEIUnknown, resolver.NoteRegisterEntryUnknown, resolver.NoteWordsTooCommon, resolver.NoteNothingSearchable, ""}
	in := filepath.Join(t.TempDir(), "firmen.csv")
	e2e.WriteSheet(t, in, ',', false, rows)
	for _, lang := range []string{messages.English, messages.German} {
		out := filepath.Join(t.TempDir(), "out.csv")
		if _, stderr, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--lang", lang, "--query", "Firma", "--output", out, in); code != 0 {
			t.Fatalf("%s: exit %d, %s %s", lang, code, line, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got := e2e.ReadSheet(t, data, ',')
		reasons, name := slices.Index(got[0], "reasons"), slices.Index(got[0], "name")
		for i, row := range got[1:] {
			clue := rows[i+1][0]
			res, err := searchOfRow(dir, []string{clue, "", ""})
			if err != nil {
				t.Fatal(err)
			}
			if codes[i] == "" {
				if row[name] == "" || row[reasons] == "" {
					t.Errorf("%s: %q found no candidate: %q", lang, clue, row)
				}
				continue
			}
			u := res.Understanding
			var want []string
			for _, d := range u.NoteDetails {
				want = append(want, resolver.NoteTextIn(lang, d))
			}
			if len(res.Candidates) != 0 || row[name] != "" {
				t.Errorf("%s: %q has a candidate (%q), want none", lang, clue, row[name])
			}
			if !slices.ContainsFunc(u.NoteDetails, func(d companydocs.ReasonDetail) bool { return d.Code == codes[i] }) {
				t.Errorf("%s: %q notes %v, want %s among them", lang, clue, u.NoteDetails, codes[i])
			}
			if row[reasons] == "" || row[reasons] != oneLine(strings.Join(want, " | ")) {
				t.Errorf("%s: %q reasons %q, want the notes %q", lang, clue, row[reasons], want)
			}
		}
	}
	// through a server's batch endpoint the cells are the same
	local, _, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--lang", messages.German, "--query", "Firma", in)
	if code != 0 {
		t.Fatalf("in process: exit %d, %s", code, line)
	}
	s := e2e.StartServer(t, dir)
	remote, _, line, code := e2e.RunCLI(t, "resolve", "--server", s.Base, "--lang", messages.German, "--query", "Firma", in)
	if code != 0 || !bytes.Equal([]byte(remote), []byte(local)) {
		t.Errorf("through the server: exit %d %s:\n%s\nin process:\n%s", code, line, remote, local)
	}
}
