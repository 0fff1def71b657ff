//go:build race

package register

// raceEnabled is set when the tests run under the race detector, which
// slows bzip2 and JSON decoding of the real-data tests about tenfold.
const raceEnabled = true
