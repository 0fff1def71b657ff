//go:build !race

package ingest

// chunkPrefixLines is how many lines of a real chunk TestRealChunkPrefix reads.
const chunkPrefixLines = 20000
