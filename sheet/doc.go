// Package sheet is the resolve command's sheet client: it reads a CSV or
// TSV file row by row under caps (a row over one is refused in its own
// output line, not read), resolves each row's clue in batches on several
// workers, in process (a Searcher on the data directory's index) or
// through a server's batch endpoint (Client: signing in with an API key,
// waiting out the server's pacing, retrying an unavailable server), and
// writes the rows again in order, each followed by its best candidate;
// an output cut short is resumed where it stopped.
package sheet
