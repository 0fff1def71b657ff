package publication

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"companydocs/objectstore"
)

// States of a published generation.
const (
	StateUploading = "uploading"
	StateLive      = "live"
)

// Publication is a generation recorded in the metastore.
type Publication struct {
	Name  string
	State string
	// Manifest is the generation's files as the publisher recorded them
	// (JSON, read by the one who wrote it).
	Manifest    json.RawMessage
	Bytes       int64
	Profiles    int64
	CreatedAt   time.Time
	PublishedAt time.Time // zero while uploading
}

// Node is a node as it last reported itself.
type Node struct {
	Node       string
	Generation string // the generation it serves; "" none yet
	// Installing is the generation it downloads or installs ("" none):
	// retention keeps it as it keeps the served one.
	Installing string
	// Damaged names a published generation the node found damaged and
	// why ("" none); it backs off before fetching it again.
	Damaged     string
	Behind      int
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// ErrNotUploading is returned by Metastore.CompletePublication for a
// generation that was not begun, or is live already.
var ErrNotUploading = errors.New("the generation is not being published")

// Metastore records the published generations and the nodes that follow
// them, shared by every node and publisher (postgres/metastore).
type Metastore interface {
	// BeginPublication records p as being uploaded, with its manifest;
	// nodes do not see it until CompletePublication. Beginning one that
	// is live changes nothing; one still uploading starts over.
	BeginPublication(ctx context.Context, p Publication) error
	// CompletePublication makes name live, in one transaction.
	CompletePublication(ctx context.Context, name string) error
	// Publications returns every recorded generation, the newest first.
	Publications(ctx context.Context) ([]Publication, error)
	// NewestLive returns the newest live publication, nil when none is.
	NewestLive(ctx context.Context) (*Publication, error)
	// LiveNewerThan counts the live publications newer than name.
	LiveNewerThan(ctx context.Context, name string) (int, error)
	// DeletePublication removes name's record.
	DeletePublication(ctx context.Context, name string) error
	// Heartbeat records what a node serves and installs, now.
	Heartbeat(ctx context.Context, n Node) error
	// IndexNodes returns every node that reported itself, by name.
	IndexNodes(ctx context.Context) ([]Node, error)
	// LiveNodes counts the nodes whose last heartbeat came within the
	// last within.
	LiveNodes(ctx context.Context, within time.Duration) (int, error)
	// LockPublishing makes the caller the one publish of the metastore,
	// across machines, until release or until its process ends, however
	// it ends (share.go says why publishes run one at a time). It does
	// not wait: while another publish holds the lock it returns an error
	// a person can act on, naming that publish as far as it is known.
	LockPublishing(ctx context.Context) (release func(), err error)
}

// Listener is a Metastore that tells a node of a publication at once
// (postgres/metastore, by PostgreSQL's LISTEN and NOTIFY). A follower
// whose metastore is one syncs on each, and still asks at its interval,
// which also sends its heartbeat: a notification missed costs at most
// one interval.
type Listener interface {
	// ListenPublications calls published with the name of every
	// generation made live once it is, and with the newest live one
	// whenever it starts listening (it may have missed one), until ctx
	// ends; it outlasts lost connections.
	ListenPublications(ctx context.Context, published func(name string))
}

// Blobs is the object store the generations' files are uploaded to and
// downloaded from, under a prefix of its own (objectstore.Store).
type Blobs interface {
	Upload(ctx context.Context, name, dir string, files []objectstore.File) (int64, error)
	Download(ctx context.Context, name, dir string, files []objectstore.File, rate int64, progress func(done, total int64)) error
	// Holds reports whether the object key holds f's size and SHA-256.
	Holds(ctx context.Context, key string, f objectstore.File) (bool, error)
	// DeleteExcept deletes name's objects but those keep names, and
	// returns the keys it kept.
	DeleteExcept(ctx context.Context, name string, keep func(key string) bool) ([]string, error)
	DeleteObject(ctx context.Context, key string) error
	AbortUploads(ctx context.Context, name string) ([]string, error)
	Contents(ctx context.Context) ([]objectstore.Entry, error)
	Prefix() string
}

// Both implementations are checked where they are declared; the object
// store's here, as objectstore imports nothing of this module.
var _ Blobs = (*objectstore.Store)(nil)
