package publication

import (
	"context"
	"encoding/json"
	"fmt"

	"companydocs/objectstore"
)

// Shared objects. An incremental ingest's generation holds most of its
// bytes in files identical to its predecessor's (the search index's
// large segment, the profile store's base), so a publish uploads only the
// files the object store does not hold yet: a manifest entry may name the
// object of an earlier generation that holds the same content (the same
// size and SHA-256) as objectstore.File.Object, "<earlier>/<path>". Every
// object stays under the name of the generation that uploaded it, so
// that a killed publish, a retired generation and anything else under
// the prefix are told apart by name as before; a manifest recorded before
// sharing existed names no object and reads as before.
//
// Retention deletes an object only when no recorded publication's
// manifest names it: a retired generation's objects that a newer one
// still names stay under its name after its record is gone, and are
// deleted with the last publication that names them.
//
// A publication is recorded (BeginPublication) before its upload, so a
// later retention sees what it names. Publishes run one at a time, under
// the metastore's publishing lock (Metastore.LockPublishing), held from
// before the cleaning until the publication is live, and again for the
// retention: a second publisher's retention that read the publications
// before this one was recorded, and retired both the generations it
// names an object of, would delete that object; Upload's check after the
// upload would fail the publish if the object went before it, not if it
// went between the check and going live.

// minShared is the smallest file a publish takes from an earlier
// generation's object instead of uploading it. Smaller ones (bleve's
// index_meta.json is the same in every generation) cost nothing to upload
// again, and naming them would keep a retired generation's name in the
// store for a few bytes.
const minShared = 64 << 10

// content is what makes two files the same: their size and SHA-256.
type content struct {
	size   int64
	sha256 string
}

func contentOf(f objectstore.File) content { return content{f.Size, f.SHA256} }

// manifestFiles reads a publication's manifest.
func manifestFiles(p Publication) ([]objectstore.File, error) {
	var files []objectstore.File
	if err := json.Unmarshal(p.Manifest, &files); err != nil {
		return nil, fmt.Errorf("read the manifest of %s: %w: %w", p.Name, errDamagedManifest, err)
	}
	return files, nil
}

// share names, for every file of the generation name of at least
// minShared bytes, the object of a live publication that holds the same
// content, if the store holds it with that size and SHA-256 (its bytes
// are read by the nodes, which check them). A generation live already
// keeps the objects its manifest names: publishing it again restores what
// differs, never moves a file. It returns the bytes shared.
func (p *Publisher) share(ctx context.Context, name string, files []objectstore.File, pubs []Publication) int64 {
	for _, pub := range pubs {
		if pub.Name == name && pub.State == StateLive {
			return keepObjects(files, pub)
		}
	}
	sources := map[content]string{} // the object holding each content, the newest publication's first
	for _, pub := range pubs {
		if pub.State != StateLive || pub.Name == name {
			continue
		}
		listed, err := manifestFiles(pub)
		if err != nil {
			continue // nothing a node can read: no source
		}
		for _, f := range listed {
			if _, ok := sources[contentOf(f)]; !ok {
				sources[contentOf(f)] = f.Key(pub.Name)
			}
		}
	}
	var shared int64
	for i, f := range files {
		key, ok := sources[contentOf(f)]
		if f.Size < minShared || !ok {
			continue
		}
		held, err := p.objects.Holds(ctx, key, f)
		if err != nil {
			fmt.Fprintf(p.warn, "%s is uploaded: %v\n", f.Path, err)
			continue
		}
		if held {
			files[i].Object = key
			shared += f.Size
		}
	}
	return shared
}

// keepObjects sets the objects pub's manifest names for the same files
// and returns their bytes.
func keepObjects(files []objectstore.File, pub Publication) int64 {
	listed, err := manifestFiles(pub)
	if err != nil {
		return 0
	}
	var shared int64
	for i, f := range files {
		for _, l := range listed {
			if l.Path == f.Path && contentOf(l) == contentOf(f) && l.Object != "" {
				files[i].Object = l.Object
				shared += f.Size
			}
		}
	}
	return shared
}

// references are the objects the recorded publications name, and the
// names they are recorded under.
type references struct {
	keys     map[string]bool
	recorded map[string]bool
}

// referencesBut collects the references of every publication of pubs
// but the one called except: the objects of their manifests, their own
// and the earlier generations' they name. A manifest that cannot be read
// names nothing (no node can follow it).
func referencesBut(pubs []Publication, except string) references {
	r := references{keys: map[string]bool{}, recorded: map[string]bool{}}
	for _, pub := range pubs {
		if pub.Name == except {
			continue
		}
		r.recorded[pub.Name] = true
		listed, err := manifestFiles(pub)
		if err != nil {
			continue
		}
		for _, f := range listed {
			r.keys[f.Key(pub.Name)] = true
		}
	}
	return r
}

// namedGenerations are the generations whose objects the manifests of
// pubs name besides their own: those a retired generation left in the
// store for a newer one.
func namedGenerations(pubs []Publication) map[string]bool {
	out := map[string]bool{}
	for _, pub := range pubs {
		listed, err := manifestFiles(pub)
		if err != nil {
			continue
		}
		for _, f := range listed {
			if f.Object != "" {
				out[objectstore.KeyGeneration(f.Object)] = true
			}
		}
	}
	return out
}

// removal is what removing a publication did beside deleting its own
// objects: the incomplete uploads it aborted, the objects of its name it
// kept for a publication that names them, and the objects of generations
// no longer recorded that it was the last to name.
type removal struct {
	aborted, kept, released []string
}

// notes is what a line about a removed generation adds.
func (r removal) notes() string {
	s := ""
	if len(r.aborted) > 0 {
		s += fmt.Sprintf("; aborted %s of it", count(len(r.aborted), "incomplete upload"))
	}
	if len(r.kept) > 0 {
		s += fmt.Sprintf("; kept %s a newer generation shares", count(len(r.kept), "object"))
	}
	if len(r.released) > 0 {
		s += fmt.Sprintf("; deleted %s of retired generations it was the last to share", count(len(r.released), "object"))
	}
	return s
}

// remove deletes a generation the metastore records as the publisher's
// (pubs are the recorded publications): its incomplete uploads aborted,
// its objects deleted but those another recorded publication names (they
// stay under its name), the objects of generations no longer recorded
// that it named and no other publication does, and then its record. A
// removal cut short leaves the record, so that the next one finishes it.
func (p *Publisher) remove(ctx context.Context, name string, pubs []Publication) (removal, error) {
	var r removal
	var err error
	if r.aborted, err = p.objects.AbortUploads(ctx, name); err != nil {
		return r, err
	}
	others := referencesBut(pubs, name)
	if r.kept, err = p.objects.DeleteExcept(ctx, name, func(key string) bool { return others.keys[key] }); err != nil {
		return r, err
	}
	for _, pub := range pubs {
		if pub.Name != name {
			continue
		}
		listed, _ := manifestFiles(pub) // unreadable: it names nothing
		for _, f := range listed {
			if f.Object == "" || others.keys[f.Object] || others.recorded[objectstore.KeyGeneration(f.Object)] || objectstore.KeyGeneration(f.Object) == name {
				continue
			}
			if err := p.objects.DeleteObject(ctx, f.Object); err != nil {
				return r, err
			}
			r.released = append(r.released, f.Object)
		}
	}
	return r, p.meta.DeletePublication(ctx, name)
}

// without returns pubs without the publication called name.
func without(pubs []Publication, name string) []Publication {
	out := make([]Publication, 0, len(pubs))
	for _, p := range pubs {
		if p.Name != name {
			out = append(out, p)
		}
	}
	return out
}
