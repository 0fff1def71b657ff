// Package data holds the material the binary embeds: a real sample of the
// OffeneRegister dump (served on an empty data directory) and example plans.
package data

import _ "embed"

// Sample is a bzip2-compressed OffeneRegister JSONL sample of real records
// (CC BY 4.0, OffeneRegister.de / OpenCorporates).
//
//go:embed sample.jsonl.bz2
var Sample []byte

// SampleName names the embedded sample in ingest summaries.
const SampleName = "embedded:data/sample.jsonl.bz2"

// LEISample holds 210 real GLEIF golden-copy records of German entities
// (CC0), ingested with Sample so that LEIs and discovery candidates work
// out of the box.
//
//go:embed lei_sample.csv
var LEISample []byte

// LEISampleName names the embedded LEI sample in ingest summaries.
const LEISampleName = "embedded:data/lei_sample.csv"

// Plans is the example plans file used when no --plans file is given.
//
//go:embed plans.json
var Plans []byte

// PlansName names the embedded plans in error messages.
const PlansName = "embedded:data/plans.json"
