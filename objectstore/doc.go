// Package objectstore publishes index generations to an object store and
// fetches them back: an S3-compatible bucket (s3://) or a shared directory
// (file://). It is the only importer of gocloud.dev/blob.
//
// A generation called name is stored as one object per file under
// "name/<path>", with the file's SHA-256 in the object's metadata. Upload
// skips objects already there with the right size and SHA-256, and Download
// keeps files already in place and continues partial ones, so that a
// publish or a fetch that was killed continues where it stopped. Every byte
// that lands under a file's final name has been checked against the size
// and SHA-256 the caller listed (meta.json of the generation); a damaged
// object is refused, never installed.
//
// Every call honours its context, and a request or a transfer that makes
// no progress for two minutes is cancelled, so that a store that is down
// or stalls comes back as an error naming the object, never as a hang.
//
// Upload trusts an object of the listed size and SHA-256 metadata without
// reading it back; a byte damaged in the store afterwards is found by
// Download, which checks every byte it installs.
package objectstore
