// Package ingest reads register dumps and GLEIF files and turns them into
// companydocs.Profile records.
//
// Every reader streams: a file is read line by line (or row by row), each
// record is converted and handed on, and nothing is collected, so memory
// stays flat however large a dump grows. Lines, rows and text fields are
// capped and the batches in flight are bounded by bytes, so that it also
// stays bounded however large its records are. Formats are detected from content
// (compression by magic bytes, then the first non-empty line), never from
// the file name.
//
// Run is the pipeline the ingest command uses: it reads every registry file
// (OffeneRegister JSONL, canonical JSONL) into a Sink first, then every GLEIF
// file, linking each German LEI record to its registry profile or storing it
// as a discovery candidate. Every input line is accounted for in a Summary:
// indexed, merged or skipped, by reason.
package ingest
