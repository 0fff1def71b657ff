// Package storecopy copies every record of one order store into another
// and counts what a store holds, through the ordering.Tx methods alone, so
// that it works between any two stores (bbolt's orders.db into
// PostgreSQL, for "store migrate") and proves the copy: Copy reads the
// source in one View and writes the target in one Update, so that the
// target gets all of it or nothing; a Census counts each kind of record
// and every account's balance, and Verify compares two of them.
//
// It stands beside the stores, not inside the rules: package ordering
// runs the rules over one store, this package moves records between two,
// and knows no store's package either.
package storecopy
