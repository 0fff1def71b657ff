//go:build !race

package companydocs

// raceEnabled is set when the tests run under the race detector.
const raceEnabled = false
