// Package index owns the search index of the service: the bleve mapping and
// its analyzers, the bbolt profile store, and index generations on disk.
//
// A data directory holds generations under index/:
//
//	index/
//	  CURRENT                  name of the live generation (written by rename)
//	  PUBLISHING               name of the generation being published (see sweepOrphan)
//	  LOCK                     flock held by a running build
//	  gen-20240102T030405Z-1a2b3c/
//	    bleve/                 the bleve (scorch) index; it stores each document's id
//	                           and its profile's value (since IndexVersion 9), which
//	                           searches read
//	    profiles.db            bbolt: profiles by id, ids by register number and by LEI
//	    profiles.1.db ...      in a generation an incremental build wrote: layers of
//	                           the profiles changed, added and removed since, read
//	                           with profiles.db as one store (layers.go), oldest first
//	                           as meta.json's profile_layers names them
//	    changes.db             bbolt: what changed in each profile against the previous
//	                           generation (optional; checked by Changes, not by Open)
//	    meta.json              IndexVersion, counts, creation time, sources, summary,
//	                           size and SHA-256 of every other file (checked by Open),
//	                           the change record's counts
//	  .building-.../           a generation under construction
//
// A Builder writes a new generation next to the live one and publishes it
// atomically; Open reads one generation; Live follows CURRENT and swaps
// generations while searches run. bleve types never leave this package.
package index
