//go:build !race

package register

// raceEnabled is set when the tests run under the race detector.
const raceEnabled = false
