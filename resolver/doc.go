// Package resolver turns one messy clue (a name with a typo, a city, "HRB
// 6684 München", an LEI, a director's name) into ranked candidates, each with
// a confidence, a label and the reasons behind both.
//
// It is pure logic: it parses the query, asks an Index (an interface it
// declares; package index implements it) for candidates and scores them
// with the named weights in score.go. It imports neither bleve nor Fiber.
package resolver
