package index

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"
)

// BenchmarkBleveFloor measures what bleve's segment format spends per
// document of an ingest, with nothing of companydocs around it: analysing
// the documents and building segments of DefaultBatchSize documents (what
// scorch does for every batch), then merging those segments into one, once
// (what the cheapest possible merge policy would do). Their sum is a lower
// bound of the ingest's CPU per record, whatever the pipeline around bleve
// does; docs/benchmarks-history.md ("The floor: what bleve alone costs
// per document") compares it with the 5M target.
func BenchmarkBleveFloor(b *testing.B) {
	ps := readChunk(b, "ocdata.chunk13.jsonl.bz2", 100_000)
	var build, merge time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		docs := make([]bindex.Document, len(ps))
		for j, p := range ps {
			d := newDocument(p).bleveDocument(p.ID, nil)
			d.AddIDField() // as scorch's Batch does
			docs[j] = d
		}
		b.StartTimer()
		start := cpuTime()
		segs := buildSegments(b, docs, DefaultBatchSize)
		built := cpuTime()
		path := filepath.Join(b.TempDir(), "merged.zap")
		if _, _, err := new(zap.ZapPlugin).Merge(segs, make([]*roaring.Bitmap, len(segs)), path, nil, nil); err != nil {
			b.Fatal(err)
		}
		build += built - start
		merge += cpuTime() - built
	}
	docs := float64(len(ps) * b.N)
	perDoc := func(d time.Duration) float64 { return float64(d.Microseconds()) / docs }
	b.ReportMetric(perDoc(build), "build-cpu-µs/doc")
	b.ReportMetric(perDoc(merge), "merge-cpu-µs/doc")
	// both cores busy with nothing but bleve's work
	b.ReportMetric(2e6/(perDoc(build)+perDoc(merge)), "max-docs/s-2-cores")
}

// buildSegments analyses docs and builds in-memory segments of size
// documents each, as scorch does for a batch.
func buildSegments(tb testing.TB, docs []bindex.Document, size int) []segment.Segment {
	tb.Helper()
	var segs []segment.Segment
	for start := 0; start < len(docs); start += size {
		batch := docs[start:min(start+size, len(docs))]
		for _, d := range batch {
			d.VisitFields(func(f bindex.Field) { f.Analyze() })
		}
		seg, _, err := new(zap.ZapPlugin).New(batch)
		if err != nil {
			tb.Fatal(err)
		}
		segs = append(segs, seg)
	}
	return segs
}
