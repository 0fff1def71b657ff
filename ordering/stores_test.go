package ordering_test

import (
	"path/filepath"

	"companydocs/bbolt"
	"companydocs/ordering"
	"companydocs/postgres"
)

// The stores the ordering tests run against, one line each (see
// ordering.TestStores).
func init() {
	ordering.TestStores["bbolt"] = func(dir string) (ordering.Store, error) {
		db, err := bbolt.Open(filepath.Join(dir, bbolt.DatabaseFile), bbolt.Options{})
		if err != nil {
			return nil, err // not a nil *bbolt.DB in a non-nil Store
		}
		return db, nil
	}
	ordering.TestStores["postgres"] = openPostgres // postgres_test.go
	ordering.TestDocuments["bbolt"] = func(store ordering.Store, dir string) (ordering.Documents, error) {
		return bbolt.OpenDocuments(store, dir)
	}
	ordering.TestDocuments["postgres"] = func(store ordering.Store, dir string) (ordering.Documents, error) {
		return postgres.OpenDocuments(store.(*postgres.DB), dir)
	}
}
