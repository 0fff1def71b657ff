//go:build race

package serve

// raceEnabled is set when the tests run under the race detector, whose
// shadow memory inflates a child's resident memory several times over.
const raceEnabled = true
