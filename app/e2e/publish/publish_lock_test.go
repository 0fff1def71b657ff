package publish

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs/internal/e2e"
	"companydocs/internal/objectstoretest"
	"companydocs/postgres/metastore"
	"companydocs/publication"

	"github.com/jackc/pgx/v5"
)

// TestOnePublishAtATime, on a shared directory: a publication a killed
// publish left uploading two hours ago lies in the store, an object and
// a record, which a publish deletes before it uploads. Two publishes of
// two generations start at once while the test holds the table of
// publications, so that the one that takes the publishing lock waits at
// its first read. The other exits at once with status 1 and the sentence
// naming the running publish; it deleted nothing (the killed
// publication's object and record are there) and recorded nothing. Once
// the table is let go, the first publishes its generation and deletes
// the killed publication.
func TestOnePublishAtATime(t *testing.T) {
	f := newPrefixFileSetup(t)
	db := mustMetastore(t, f.Store)
	orphan := objectstoretest.Prefix + killedPublication + "/meta.json"
	recordKilledPublication(t, metastore.New(db), f.Store)
	f.bucket.put(t, orphan)
	dirs := []string{f.PublisherDir, t.TempDir()}
	gens := make([]string, len(dirs))
	for i, dir := range dirs {
		gens[i] = e2e.MustBuild(t, dir, 300+100*i, e2e.SampleFile(t)).ID
	}

	held := holdPublications(t, f.Store)
	results := make(chan publishResult, len(dirs))
	for i, dir := range dirs {
		go func() { results <- runPublish(t, f, i, dir) }()
	}
	refused := waitPublish(t, results, held)
	if refused.code != 1 || !strings.Contains(refused.line, "Another publish is running on this metastore (companydocs publish pid "+fmt.Sprint(os.Getpid())) {
		t.Errorf("the publish that did not get the lock: exit %d %s\n%s%s\nwant exit 1 naming the running publish", refused.code, refused.line, refused.out, refused.errOut)
	}
	t.Logf("refused after %s: %s", refused.took.Round(time.Millisecond), refused.line)
	if names := held.names(t); !slices.Equal(names, []string{killedPublication}) || !slices.Contains(f.bucket.keys(t), orphan) {
		t.Errorf("publications %q, objects %q after the refused publish; want %s's record and object alone", names, f.bucket.keys(t), killedPublication)
	}

	held.letGo()
	published := waitPublish(t, results, held)
	if published.code != 0 || !strings.Contains(published.out, "published "+gens[published.i]+":") || !strings.Contains(published.out, "deleted "+killedPublication+" ") {
		t.Fatalf("the publish that got the lock: exit %d %s\n%s%s\nwant %s published and %s deleted", published.code, published.line, published.out, published.errOut, gens[published.i], killedPublication)
	}
	if slices.Contains(f.bucket.keys(t), orphan) {
		t.Errorf("%s is still there after the publish", orphan)
	}
}

// killedPublication is a publication a killed publish left uploading.
const killedPublication = "gen-20000101T000000.000Z-0000aaaa"

// recordKilledPublication records killedPublication, begun two hours
// ago.
func recordKilledPublication(t *testing.T, meta *metastore.Store, url string) {
	t.Helper()
	if err := meta.BeginPublication(context.Background(), publication.Publication{Name: killedPublication, Manifest: []byte("[]")}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, url, `UPDATE published_generations SET created_at = now() - interval '2 hours' WHERE name = $1`, killedPublication)
}

// heldPublications is the table of publications locked against every
// other session, readers too: the test reads it through the lock.
type heldPublications struct {
	conn *pgx.Conn
	tx   pgx.Tx
	done bool
}

// holdPublications locks the table of publications until letGo.
func holdPublications(t *testing.T, url string) *heldPublications {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	h := &heldPublications{conn: conn}
	h.tx, err = conn.Begin(ctx)
	if err == nil {
		_, err = h.tx.Exec(ctx, `LOCK TABLE published_generations IN ACCESS EXCLUSIVE MODE`)
	}
	t.Cleanup(h.letGo)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// names lists the recorded publications.
func (h *heldPublications) names(t *testing.T) []string {
	t.Helper()
	rows, err := h.tx.Query(context.Background(), `SELECT name FROM published_generations ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// letGo ends the lock; calls after the first do nothing.
func (h *heldPublications) letGo() {
	if !h.done {
		h.done = true
		h.tx.Rollback(context.Background())
		h.conn.Close(context.Background())
	}
}

// publishResult is how a publish of the i-th data directory ended.
type publishResult struct {
	i                 int
	out, errOut, line string
	code              int
	took              time.Duration
}

// runPublish publishes the generation CURRENT names in dir.
func runPublish(t *testing.T, f prefixSetup, i int, dir string) publishResult {
	began := time.Now()
	out, errOut, line, code := e2e.RunCLI(t, "publish", "--data-dir", dir, "--index-source", f.Source, "--store", f.Store)
	return publishResult{i: i, out: out, errOut: errOut, line: line, code: code, took: time.Since(began)}
}

// publishWithin bounds the wait for a publish to end: opening the
// metastore waits up to a second for another's migration lock.
const publishWithin = 20 * time.Second

// waitPublish waits for the next publish to end; if none does, it lets
// go of the table so that both can end, and fails.
func waitPublish(t *testing.T, results <-chan publishResult, held *heldPublications) publishResult {
	t.Helper()
	select {
	case r := <-results:
		return r
	case <-time.After(publishWithin):
		held.letGo()
		t.Fatalf("no publish ended within %s while the table of publications was held: neither was refused", publishWithin)
		return publishResult{}
	}
}
