package index

// ReadCurrent returns the name of the published generation of a data
// directory, or ErrNoGeneration when none has been published.
func ReadCurrent(dataDir string) (string, error) { return readCurrent(dataDir) }
