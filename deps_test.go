package companydocs_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencyDirection keeps the package layout checkable: one owner per
// dependency (bleve in index, bbolt in the order store bbolt and in index,
// Fiber in httpapi), the domain (the root package, and the register
// references and text folding it stands on) on the standard library and
// x/text,
// resolver, ordering and ingest independent of each other and of index and
// httpapi (the consumer declares the interface, cmd/companydocs wires the
// concrete types), and ordering free of any store (a store implements
// ordering.Store and imports ordering, never the other way); the binary
// links no test or benchmark support (internal/bench, internal/imprint,
// the end-to-end tests' internal/e2e ...).
func TestDependencyDirection(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"companydocs", []string{"companydocs/", "github.com/", "go.etcd.io/"}},
		// text folding stands on the standard library and x/text alone
		{"companydocs/textfold", []string{"companydocs/", "github.com/", "go.etcd.io/"}},
		// register references, courts and LEIs stand on text folding; they
		// know nothing of profiles or orders (the root package imports them)
		{"companydocs/register", []string{"companydocs/", "github.com/", "go.etcd.io/"}},
		{"companydocs/resolver", []string{"companydocs/index", "companydocs/httpapi", "companydocs/ordering", "companydocs/bbolt", "companydocs/ingest", "github.com/blevesearch/", "github.com/gofiber/", "go.etcd.io/bbolt"}},
		{"companydocs/ordering", []string{"github.com/stripe/", "companydocs/index", "companydocs/httpapi", "companydocs/resolver", "companydocs/ingest", "companydocs/bbolt", "github.com/blevesearch/", "github.com/gofiber/", "go.etcd.io/bbolt"}},
		// ordering does no file I/O: its documents go through the store's
		// Documents, its stores are the ones that write files
		{"companydocs/ordering", []string{"companydocs/postgres", "companydocs/internal/atomicfile", "companydocs/internal/filesum", "github.com/jackc/"}},
		// storecopy moves records between any two stores through ordering.Tx
		// alone: it stands beside the stores and imports none of them
		{"companydocs/storecopy", []string{"companydocs/bbolt", "companydocs/postgres", "companydocs/index", "companydocs/httpapi", "companydocs/resolver", "companydocs/ingest", "companydocs/metrics", "companydocs/webhook", "companydocs/internal/atomicfile", "github.com/", "go.etcd.io/"}},
		// plansfile reads the plans file for ordering, which parses it
		{"companydocs/plansfile", []string{"companydocs/bbolt", "companydocs/postgres", "companydocs/index", "companydocs/httpapi", "companydocs/resolver", "companydocs/ingest", "companydocs/metrics", "companydocs/webhook", "github.com/", "go.etcd.io/"}},
		// atomicfile, the one temp-fsync-rename, stands on the standard library
		{"companydocs/internal/atomicfile", []string{"companydocs/", "github.com/", "go.etcd.io/", "golang.org/x/"}},
		// filesum, the process's memory of files hashed, stands on the
		// standard library
		{"companydocs/internal/filesum", []string{"companydocs/", "github.com/", "go.etcd.io/", "golang.org/x/"}},
		{"companydocs/bbolt", []string{"github.com/stripe/", "companydocs/index", "companydocs/httpapi", "companydocs/resolver", "companydocs/ingest", "github.com/blevesearch/", "github.com/gofiber/"}},
		{"companydocs/ingest", []string{"companydocs/index", "companydocs/httpapi", "companydocs/resolver", "companydocs/ordering", "companydocs/bbolt", "github.com/blevesearch/", "github.com/gofiber/", "go.etcd.io/bbolt"}},
		{"companydocs/index", []string{"companydocs/httpapi", "companydocs/resolver", "companydocs/ordering", "companydocs/bbolt", "companydocs/ingest", "github.com/gofiber/"}},
		{"companydocs/webhook", []string{"companydocs/", "github.com/", "go.etcd.io/", "golang.org/x/"}},
		// httpapi knows no metrics package: it declares the Metrics it
		// reports to, which metrics.HTTP implements and cmd wires in
		{"companydocs/httpapi", []string{"github.com/stripe/", "companydocs/index", "companydocs/ingest", "companydocs/ordering", "companydocs/bbolt", "companydocs/postgres", "companydocs/metrics", "github.com/blevesearch/", "go.etcd.io/bbolt"}},
		{"companydocs/postgres", []string{"companydocs/publication", "companydocs/objectstore", "github.com/stripe/", "companydocs/index", "companydocs/httpapi", "companydocs/resolver", "companydocs/ingest", "companydocs/bbolt", "companydocs/metrics", "github.com/blevesearch/", "github.com/gofiber/", "go.etcd.io/bbolt"}},
		{"companydocs/reconcile", []string{"companydocs/index", "companydocs/httpapi", "companydocs/ordering", "companydocs/bbolt", "companydocs/ingest", "github.com/blevesearch/", "github.com/gofiber/", "go.etcd.io/bbolt"}},
		{"companydocs/metrics", []string{"companydocs/", "github.com/blevesearch/", "github.com/gofiber/", "go.etcd.io/"}},
		{"companydocs/objectstore", []string{"companydocs/", "github.com/blevesearch/", "github.com/gofiber/", "github.com/jackc/", "go.etcd.io/"}},
		{"companydocs/stripepay", []string{"companydocs/index", "companydocs/httpapi", "companydocs/bbolt", "companydocs/postgres", "github.com/blevesearch/", "github.com/gofiber/", "github.com/jackc/", "go.etcd.io/"}},
		// the sheet client resolves through a Searcher the command opens, or a server over HTTP
		{"companydocs/sheet", []string{"companydocs/index", "companydocs/httpapi", "companydocs/ordering", "companydocs/bbolt", "companydocs/postgres", "companydocs/ingest", "github.com/blevesearch/", "github.com/gofiber/", "go.etcd.io/bbolt", "github.com/jackc/"}},
		// publication reaches the metastore and the object store through its ports; the stores do not know it
		{"companydocs/publication", []string{"companydocs/postgres", "companydocs/httpapi", "companydocs/bbolt", "companydocs/ingest", "companydocs/resolver", "companydocs/sheet", "github.com/jackc/", "github.com/gofiber/", "github.com/stripe/"}},
		{"companydocs/postgres/metastore", []string{"companydocs/httpapi", "companydocs/bbolt", "companydocs/ingest", "companydocs/resolver", "companydocs/sheet", "github.com/gofiber/", "github.com/stripe/"}},
		// the binary links no test or benchmark support
		{"companydocs/cmd/companydocs", []string{"companydocs/internal/bench", "companydocs/internal/imprint", "companydocs/internal/realdata", "companydocs/internal/realprofiles", "companydocs/internal/testclock", "companydocs/internal/objectstoretest", "companydocs/internal/stripemocktest", "companydocs/internal/e2e"}},
		{"companydocs/app", []string{"companydocs/internal/bench", "companydocs/internal/imprint", "companydocs/internal/realdata", "companydocs/internal/realprofiles", "companydocs/internal/testclock", "companydocs/internal/objectstoretest", "companydocs/internal/stripemocktest", "companydocs/internal/e2e"}},
	}
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", r.pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", r.pkg, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep == r.pkg || isDomain(dep) && !isDomain(r.pkg) {
					continue
				}
				for _, f := range r.forbidden {
					if strings.HasPrefix(dep, f) && !allowed(r.pkg, dep) {
						t.Errorf("%s depends on %s", r.pkg, dep)
					}
				}
			}
		})
	}
}

// isDomain reports whether pkg is the domain every package may import: the
// root package and the packages it stands on.
func isDomain(pkg string) bool {
	return pkg == "companydocs" || pkg == "companydocs/register" || pkg == "companydocs/textfold"
}

// allowed lists the exceptions: every package may say the message
// catalog's sentences; every package that writes files but ordering may
// publish them through internal/atomicfile, and every package that reads
// them but ordering hash them through internal/filesum; the root package stands on
// register and text folding, register on text folding, which uses x/text;
// httpapi serves the embedded web page, the resolver's types and the
// reconciliation shapes.
func allowed(pkg, dep string) bool {
	switch {
	case dep == "companydocs/messages": // the message catalog: embedded files and the standard library
		return true
	case dep == "companydocs/internal/atomicfile" && pkg != "companydocs/ordering": // temp-fsync-rename on the standard library alone
		return true
	case dep == "companydocs/internal/filesum" && pkg != "companydocs/ordering": // the SHA-256 of files, once a process, on the standard library alone
		return true
	case pkg == "companydocs" && (dep == "companydocs/register" || dep == "companydocs/textfold"):
		return true
	case pkg == "companydocs/register" && dep == "companydocs/textfold":
		return true
	case isDomain(pkg) && strings.HasPrefix(dep, "golang.org/x/text"):
		return true
	case pkg == "companydocs/httpapi" && (dep == "companydocs/web" || dep == "companydocs/resolver" || dep == "companydocs/reconcile"):
		return true
	case pkg == "companydocs/webhook" && dep == "github.com/standard-webhooks/standard-webhooks/libraries/go":
		return true
	case pkg == "companydocs/webhook" && strings.HasPrefix(dep, "golang.org/x/text"): // through the domain's text folding
		return true
	}
	return false
}

// TestOrderingDoesNoFileIO keeps file I/O out of the rules: ordering
// imports none of the standard library's file packages (its stores keep
// the files, plansfile reads the plans file); its tests may.
func TestOrderingDoesNoFileIO(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "companydocs/ordering").Output()
	if err != nil {
		t.Fatalf("go list companydocs/ordering: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if slices.Contains([]string{"os", "io/fs", "io/ioutil", "path/filepath"}, imp) {
			t.Errorf("companydocs/ordering imports %s", imp)
		}
	}
}

// TestMetricsOwnsPrometheus keeps every Prometheus collector in one
// place: no other package of the binary imports client_golang (httpapi
// reports to the Metrics interface it declares; its tests may read the
// collectors).
func TestMetricsOwnsPrometheus(t *testing.T) {
	checkOnlyImporters(t, "github.com/prometheus/", "companydocs/metrics")
}

// TestWebhookSendsWebhooks keeps the outbound dispatch in one room: only
// package webhook signs and sends with the Standard Webhooks library.
func TestWebhookSendsWebhooks(t *testing.T) {
	checkOnlyImporters(t, "github.com/standard-webhooks/", "companydocs/webhook")
}

// TestObjectStoreOwnsBlob keeps gocloud.dev in objectstore: no other
// package of the binary imports it (its tests may, for a fileblob bucket).
func TestObjectStoreOwnsBlob(t *testing.T) {
	checkOnlyImporters(t, "gocloud.dev/", "companydocs/objectstore")
}

// TestStripePayOwnsStripeGo keeps stripe-go in stripepay: no other package
// of the binary imports it (stripepay/signedevent, which signs the events
// of payments send-test-event and of the tests' stripe-mock, is its own).
func TestStripePayOwnsStripeGo(t *testing.T) {
	checkOnlyImporters(t, "github.com/stripe/", "companydocs/stripepay", "companydocs/stripepay/signedevent")
}

// testSupport lists the packages that hold only test support, which the
// binary never links (TestDependencyDirection): their imports count as
// test imports. internal/e2e holds the end-to-end tests' helpers, which
// verify webhook signatures and damage published objects as those tests
// did when they were test files of app.
var testSupport = []string{"companydocs/internal/e2e"}

// checkOnlyImporters fails for every package but owners that imports a
// path starting with prefix (test imports, and test support, aside).
func checkOnlyImporters(t *testing.T, prefix string, owners ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, prefix) && !slices.Contains(owners, pkg) && !slices.Contains(testSupport, pkg) {
				t.Errorf("%s imports %s: only %s may", pkg, imp, strings.Join(owners, " and "))
			}
		}
	}
}
