// Package objectstore publishes index generations to an object store and
// fetches them back: an S3-compatible bucket (s3://) or a shared directory
// (file://). It is the only importer of gocloud.dev/blob.
//
// A store is a prefix of a bucket (required for s3://, the directory
// itself for file:// unless the URL names one): a generation called name
// is stored as one object per file under "<prefix>name/<path>", with the
// file's SHA-256 in the object's metadata. A file whose content an earlier
// generation's object holds already (the same size and SHA-256) may name
// that object instead (File.Object, "<earlier>/<path>"): Upload checks it
// and sends nothing, Download reads it. Which files share, and when a
// shared object may be deleted, is the caller's decision (publication).
// Upload skips objects already
// there with the right size and SHA-256, and Download keeps files already
// in place and continues partial ones, so that a publish or a fetch that
// was killed continues where it stopped. Every byte
// that lands under a file's final name has been checked against the size
// and SHA-256 the caller listed (meta.json of the generation); a damaged
// object is refused, never installed.
//
// Every call honours its context, and a request or a transfer that makes
// no progress for two minutes (Store.WithIdle sets another bound) is
// cancelled, so that a store that is down or stalls comes back as an
// error naming the object, never as a hang.
//
// Nothing beside the prefix is listed, written, deleted or aborted.
// Contents lists what lies under the prefix, incomplete multipart uploads
// included (which blob does not list: they are read through s3blob's
// *s3.Client); AbortUploads aborts those under one generation;
// DeleteExcept deletes a generation's objects but those still named by
// another, DeleteObject one object. What to delete or abort is the
// caller's decision (publish: only generations its metastore records as
// its own, and objects no remaining manifest names).
//
// Upload trusts an object of the listed size and SHA-256 metadata without
// reading it back; a byte damaged in the store afterwards is found by
// Download, which checks every byte it installs.
package objectstore
