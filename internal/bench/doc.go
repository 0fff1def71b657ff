// Package bench measures companydocs at national scale: it reads and writes
// register dumps in the OffeneRegister format, builds labelled query sets
// from a corpus, drives the HTTP API with concurrent clients, runs the same
// name queries against a PostgreSQL pg_trgm index, and summarises
// latencies, throughput, accuracy and memory.
//
// The package is used by cmd/corpusgen and cmd/bench; it is not imported by
// the service.
package bench
