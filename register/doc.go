// Package register owns how the German registers identify an entry: the
// register reference (court, former court, type, number, suffix) and its
// parsing in every notation people write, the register courts and their
// codes, when two references name one entry, LEIs, and the legal forms the
// registers write after a name (the reference scanner must tell the form
// "AG" from the Amtsgericht "AG", so the legal forms live here). It depends
// on the standard library and textfold only; the root package's profiles,
// candidates and orders carry its types.
package register
