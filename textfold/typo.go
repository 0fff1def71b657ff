package textfold

// TypoBudget is the number of edits a word of n letters may carry and
// still match: none up to 3 letters, where one edit makes another word
// ("Bau" and "Bad"), one up to 7, two beyond. The index retrieves with
// this budget and the resolver scores with it, so that what one finds the
// other recognises.
func TypoBudget(n int) int {
	switch {
	case n <= 3:
		return 0
	case n <= 7:
		return 1
	}
	return 2
}

// MinWordStart is the shortest start of a word still being typed that is
// read as every word it starts: the index completes no shorter one, and
// the resolver scores the start as the word typed whole.
const MinWordStart = 4
