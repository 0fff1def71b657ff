// Package realprofiles turns the real register and LEI records that
// package realdata keeps into company profiles for the order tests. It is
// test support only, apart from realdata because the root package's tests
// use realdata and this package uses the root package.
package realprofiles

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/internal/realdata"
	"companydocs/register"
)

// ocRecord is the part of an OffeneRegister record the tests need.
type ocRecord struct {
	CompanyNumber string `json:"company_number"`
	Name          string `json:"name"`
	CurrentStatus string `json:"current_status"`
	Attributes    struct {
		RegisterArt      string          `json:"_registerArt"`
		RegisterNummer   string          `json:"_registerNummer"`
		RegisteredOffice string          `json:"registered_office"`
		AdditionalData   map[string]bool `json:"additional_data"`
	} `json:"all_attributes"`
}

// registerDocumentTypes are the document types a register entry can hold.
var registerDocumentTypes = []companydocs.DocumentType{
	companydocs.DocumentAD, companydocs.DocumentCD, companydocs.DocumentHD, companydocs.DocumentDK,
	companydocs.DocumentSI, companydocs.DocumentUT, companydocs.DocumentVO,
}

// profileOf turns a real record into a registry-cache profile: court code
// and former court from company_number, type and number from the
// attributes, suffix = what follows the number in company_number.
func profileOf(r ocRecord) *companydocs.Profile {
	parts := strings.Split(r.CompanyNumber, "_")
	ref := register.Ref{Court: parts[0], Type: register.Type(r.Attributes.RegisterArt), Number: r.Attributes.RegisterNummer}
	if len(parts) == 3 {
		ref.FormerCourt = parts[1]
	}
	last := parts[len(parts)-1]
	if i := strings.Index(last, ref.Number); i >= 0 {
		ref.Suffix = last[i+len(ref.Number):]
	}
	p := &companydocs.Profile{
		ID: companydocs.ProfileID(ref), Source: companydocs.SourceRegistryCache, Ref: ref,
		Name: r.Name, Seat: r.Attributes.RegisteredOffice, Verified: true,
		Removed: r.CurrentStatus == "removed",
	}
	for _, t := range registerDocumentTypes {
		if r.Attributes.AdditionalData[string(t)] {
			p.Documents = append(p.Documents, t)
		}
	}
	return p
}

var (
	profilesOnce sync.Once
	profiles     []*companydocs.Profile
	profilesErr  error
)

// Registry returns the 665 OffeneRegister fixture records as
// verified registry-cache profiles, in file order, loaded once per test
// binary. Callers must not change them.
func Registry(tb testing.TB) []*companydocs.Profile {
	tb.Helper()
	path := realdata.Path(tb, "offeneregister", "fixtures_665.jsonl")
	profilesOnce.Do(func() { profiles, profilesErr = loadProfiles(path) })
	if profilesErr != nil {
		tb.Fatal(profilesErr)
	}
	return profiles
}

func loadProfiles(path string) ([]*companydocs.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*companydocs.Profile
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r ocRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, err
		}
		out = append(out, profileOf(r))
	}
	return out, sc.Err()
}

// Discovery makes a discovery profile from the first real GLEIF
// record; discovery profiles start unverified until corroborated.
func Discovery(tb testing.TB) *companydocs.Profile {
	tb.Helper()
	f, err := os.Open(realdata.Path(tb, "gleif", "lei_records_de_goldencopy.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	row := rows[1]
	lei := register.LEI(row[col["LEI"]])
	return &companydocs.Profile{
		ID: companydocs.DiscoveryID(lei), Source: companydocs.SourceDiscovery,
		Name: row[col["Entity.LegalName"]], Seat: row[col["Entity.LegalAddress.City"]],
		Discovery: &companydocs.Discovery{
			ValidationSources: row[col["Registration.ValidationSources"]],
			Missing:           []companydocs.VerificationGap{companydocs.DescribedGap("its register reference was not matched to a register entry")},
		},
	}
}
