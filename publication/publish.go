package publication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"companydocs/index"
	"companydocs/objectstore"
)

// orphanAge is how old a publication still uploading must be before a
// later publish takes it for one a killed publish left, and removes its
// objects, its incomplete uploads and its record.
const orphanAge = time.Hour

// nodeStale is how long since its last heartbeat a node is no longer
// counted as serving or installing a generation; retention waits for the
// nodes that report. A node heartbeats every --follow-interval (10 s by
// default), also while it downloads, so the window has to outlast the
// longest gap between two heartbeats; it is also made to outlast a whole
// download, in case a node's heartbeats stall while it downloads. The
// slowest download measured (docs/benchmarks-history.md, "Publish and
// follow", 5M: 3,490,214,049 bytes) took 32.2 s with its install: node 2
// during the rollout of run 3, from a file:// store on the same disk
// (11.1 s the median of a node alone). A 5M download over a 100 Mbit/s
// link takes about 4.7 minutes, nearly the 5 minutes this window was. 15
// minutes is 28 times the slowest measured and covers a whole 5M download
// at 3.9 MB/s (31 Mbit/s, or --download-rate 3900000) or faster. Waiting
// longer for a node that stopped reporting only keeps an old generation
// in the store 10 minutes more.
const nodeStale = 15 * time.Minute

// Publisher uploads generations and records them in the metastore; it
// says what it removed, aborted and left alone on out, and what it could
// not do (the publish goes on) on warn.
type Publisher struct {
	meta      Metastore
	objects   Blobs
	out, warn io.Writer
}

// NewPublisher returns the publisher to objects, recording in meta.
func NewPublisher(meta Metastore, objects Blobs, out, warn io.Writer) *Publisher {
	return &Publisher{meta: meta, objects: objects, out: out, warn: warn}
}

// Published is what a publish recorded, and what it moved.
type Published struct {
	Publication
	Files []objectstore.File
	// Uploaded is the bytes this publish sent to the store; Shared the
	// bytes of the files whose content an earlier generation's object
	// holds (objectstore.File.Object), which it did not send.
	Uploaded, Shared int64
}

// Publish checks the generation in dir as a server would open it,
// records it as uploading, uploads the files whose content the store does
// not hold yet (those already uploaded by a killed run are kept, and a
// file an earlier live generation's object holds names that object; see
// share.go), then makes it live in one transaction. All but the check
// run under the metastore's publishing lock (Metastore.LockPublishing):
// while another publish holds it, Publish changes nothing and returns the
// lock's error.
func (p *Publisher) Publish(ctx context.Context, dir string) (*Published, error) {
	g, err := index.Open(dir) // every file against meta.json
	if err != nil {
		return nil, fmt.Errorf("the generation to publish: %w", err)
	}
	meta := g.Meta()
	g.Close()
	files, bytes, err := GenerationFiles(dir, meta)
	if err != nil {
		return nil, err
	}
	release, err := p.meta.LockPublishing(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	pub := &Published{Publication: Publication{Name: meta.ID, Bytes: bytes, Profiles: int64(meta.Profiles)}, Files: files}
	if err := p.publish(ctx, dir, pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// publish is Publish's work under the publishing lock: it cleans what
// killed publishes left, names the objects pub shares, records pub as
// uploading with its manifest, uploads the rest and makes pub live.
func (p *Publisher) publish(ctx context.Context, dir string, pub *Published) error {
	pubs := p.clean(ctx, pub.Name)
	pub.Shared = p.share(ctx, pub.Name, pub.Files, pubs)
	var err error
	if pub.Manifest, err = json.Marshal(pub.Files); err != nil {
		return err
	}
	if err := p.meta.BeginPublication(ctx, pub.Publication); err != nil {
		return err
	}
	if pub.Uploaded, err = p.objects.Upload(ctx, pub.Name, dir, pub.Files); err != nil {
		return fmt.Errorf("upload %s: %w", pub.Name, err)
	}
	if err := p.meta.CompletePublication(ctx, pub.Name); err != nil && !errors.Is(err, ErrNotUploading) {
		return err // ErrNotUploading: live already, published before
	}
	return nil
}

// Retire deletes the published generations that two newer ones have
// replaced on every node that reports (a heartbeat within nodeStale):
// their incomplete uploads, their objects but those a remaining
// publication names, then their records (see remove). Never one
// a node serves or installs, nor one it may fall back to (a node keeps its
// previous generation); with no node reporting, none; and none when the
// metastore cannot say which nodes report. It prints what it deleted.
// It runs under the publishing lock, as Publish does; while another
// publish holds it, it deletes nothing (that publish retires what is
// due once it is live).
func (p *Publisher) Retire(ctx context.Context) {
	release, err := p.meta.LockPublishing(ctx)
	if err != nil {
		fmt.Fprintf(p.warn, "retention skipped: %v\n", err)
		return
	}
	defer release()
	pubs, err := p.meta.Publications(ctx)
	if err != nil {
		fmt.Fprintf(p.warn, "retention skipped: %v\n", err)
		return
	}
	nodes, err := p.meta.IndexNodes(ctx)
	if err != nil {
		fmt.Fprintf(p.warn, "retention skipped: %v\n", err)
		return
	}
	for _, name := range retirable(pubs, nodes, time.Now()) {
		r, err := p.remove(ctx, name, pubs)
		if err != nil {
			fmt.Fprintf(p.warn, "retention: %s kept: %v\n", name, err)
			continue
		}
		pubs = without(pubs, name)
		fmt.Fprintf(p.out, "deleted %s from the object store: every node serves two newer generations%s\n", name, r.notes())
	}
}

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// retirable names the live generations that two newer live ones have
// replaced below the oldest generation a reporting node serves or
// installs (IndexNode.Generation, IndexNode.Installing; a heartbeat within
// nodeStale): never one a node serves or installs, nor the one before the
// oldest of them, which a node keeps as its previous generation (names
// sort by creation time). With no node reporting a generation, none.
func retirable(pubs []Publication, nodes []Node, now time.Time) []string {
	oldest := ""
	for _, n := range nodes {
		if now.Sub(n.HeartbeatAt) > nodeStale {
			continue
		}
		for _, g := range []string{n.Generation, n.Installing} {
			if g != "" && (oldest == "" || g < oldest) {
				oldest = g
			}
		}
	}
	if oldest == "" {
		return nil
	}
	var live []string // newest first
	for _, pub := range pubs {
		if pub.State == StateLive {
			live = append(live, pub.Name)
		}
	}
	var out []string
	newerThanServed := 0 // live generations between a candidate and the oldest served or installed, that one included
	for _, name := range live {
		if name > oldest {
			continue
		}
		if newerThanServed >= 2 {
			out = append(out, name)
		}
		newerThanServed++
	}
	return out
}

// GenerationFiles lists the generation's files for the manifest: those
// meta.json records, and meta.json itself.
func GenerationFiles(dir string, meta index.Meta) ([]objectstore.File, int64, error) {
	size, sum, err := index.FileChecksum(filepath.Join(dir, index.MetaFile))
	if err != nil {
		return nil, 0, fmt.Errorf("checksum meta.json: %w", err)
	}
	files := []objectstore.File{{Path: index.MetaFile, Size: size, SHA256: sum}}
	total := size
	for _, f := range meta.Files {
		files = append(files, objectstore.File{Path: f.Path, Size: f.Size, SHA256: f.SHA256})
		total += f.Size
	}
	return files, total, nil
}

// clean removes what killed publishes left under the prefix, and only
// what the metastore records as the publisher's: publications uploading
// for longer than orphanAge (their incomplete uploads, objects and
// records), and the incomplete uploads of publishing, the generation about
// to be published, that its own killed runs left (its objects stay: the
// upload continues them; under the publishing lock no other publish has
// uploads in progress). Everything else under the prefix is left alone
// and named, one line per top-level name (a retired generation whose
// objects a recorded one still names is not foreign). With the metastore
// unreadable nothing is removed; a failure is reported and is no reason
// not to publish. It returns the publications recorded after the
// cleaning (none when the metastore could not be read).
func (p *Publisher) clean(ctx context.Context, publishing string) []Publication {
	pubs, err := p.meta.Publications(ctx)
	if err != nil {
		fmt.Fprintf(p.warn, "the object store is left as it is, and no file is shared with an earlier generation: %v\n", err)
		return nil
	}
	for _, pub := range pubs {
		if pub.State == StateUploading && pub.Name != publishing && time.Since(pub.CreatedAt) > orphanAge {
			if p.removeOrphan(ctx, pub, pubs) {
				pubs = without(pubs, pub.Name)
			}
		}
	}
	recorded := namedGenerations(pubs)
	recorded[publishing] = true
	for _, pub := range pubs {
		recorded[pub.Name] = true
	}
	aborted, err := p.objects.AbortUploads(ctx, publishing)
	if err != nil {
		fmt.Fprintf(p.warn, "incomplete uploads of %s kept: %v\n", publishing, err)
	} else if len(aborted) > 0 {
		fmt.Fprintf(p.out, "aborted %s of %s, left by a killed publish of it\n", count(len(aborted), "incomplete upload"), publishing)
	}
	p.reportForeign(ctx, recorded)
	return pubs
}

// removeOrphan removes a publication a killed publish left uploading
// (pubs are the recorded ones) and reports whether it did.
func (p *Publisher) removeOrphan(ctx context.Context, pub Publication, pubs []Publication) bool {
	r, err := p.remove(ctx, pub.Name, pubs)
	if err != nil {
		fmt.Fprintf(p.warn, "%s, left uploading by a killed publish, kept: %v\n", pub.Name, err)
		return false
	}
	fmt.Fprintf(p.out, "deleted %s from the object store: a killed publish left it uploading %s ago%s\n",
		pub.Name, time.Since(pub.CreatedAt).Round(time.Minute), r.notes())
	return true
}

// reportForeign names every top-level name under the prefix that is not
// a generation the metastore records: publish leaves it alone.
func (p *Publisher) reportForeign(ctx context.Context, recorded map[string]bool) {
	entries, err := p.objects.Contents(ctx)
	if err != nil {
		fmt.Fprintf(p.warn, "what lies under the prefix is not known: %v\n", err)
		return
	}
	for _, e := range entries {
		if recorded[e.Generation()] {
			continue
		}
		what := count(e.Objects, "object")
		if e.Uploads > 0 {
			what += ", " + count(e.Uploads, "incomplete upload")
		}
		fmt.Fprintf(p.out, "left alone: %s%s is not a generation this metastore records (%s)\n", p.objects.Prefix(), e.Name, what)
	}
}
