// Package textfold owns how the service compares text people write: the
// folding of names (case, umlauts, diacritics, punctuation, the spelled-out
// abbreviations), their tokens, the Kölner Phonetik code of a word, the
// number of typos a word may carry, and line breaks. The index, the
// resolver, the ingest and the register scanner all fold through it, so
// that what one writes the others find. It depends on the standard library
// and golang.org/x/text only.
package textfold
