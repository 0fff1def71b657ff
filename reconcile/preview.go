package reconcile

import (
	"html/template"
	"io"
	"strings"

	"companydocs"
)

// previewPage is the card OpenRefine shows in an iframe of PreviewWidth x
// PreviewHeight pixels: what tells two namesakes apart, and whether the
// profile can be ordered. Its own styles only: the card is a whole page.
var previewPage = template.Must(template.New("preview").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Name}}</title>
<style>body{font:13px/1.35 system-ui,sans-serif;margin:6px;color:#1a1a1a}h1{font-size:15px;margin:0 0 4px}
dl{display:grid;grid-template-columns:auto 1fr;gap:1px 8px;margin:0}dt{color:#555}dd{margin:0}
.no{color:#a00}.yes{color:#060}</style></head>
<body><h1>{{.Name}}</h1><dl>
<dt>Register</dt><dd>{{.Register}}</dd>
{{if .Seat}}<dt>Seat</dt><dd>{{.Seat}}</dd>{{end}}
{{if .Address}}<dt>Address</dt><dd>{{.Address}}</dd>{{end}}
{{if .LegalForm}}<dt>Legal form</dt><dd>{{.LegalForm}}</dd>{{end}}
<dt>Status</dt><dd>{{.Status}}</dd>
<dt>Ordering</dt><dd>{{if .Eligible}}<span class="yes">orderable: {{.Documents}}</span>{{else}}<span class="no">not orderable</span>{{end}}</dd>
</dl></body></html>
`))

// Preview writes the preview card of p.
func Preview(w io.Writer, p *companydocs.Profile) error {
	eligible := p.OrderingEligible()
	return previewPage.Execute(w, struct {
		Name, Register, Seat, Address, LegalForm, Status, Documents string
		Eligible                                                    bool
	}{
		Name: p.Name, Register: strings.TrimSpace(p.CourtName() + " " + p.Ref.NumberKey()), Seat: p.Seat,
		Address: strings.TrimSuffix(strings.TrimSpace(p.Address), "."), LegalForm: p.LegalForm, Status: p.CandidateStatus(),
		Eligible: eligible, Documents: orderable(p),
	})
}

// orderable names the document types of p that can be ordered.
func orderable(p *companydocs.Profile) string {
	var out []string
	for _, t := range companydocs.OrderableDocumentTypes {
		if p.HasDocument(t) {
			out = append(out, string(t))
		}
	}
	return strings.Join(out, ", ")
}
