// Package metastore is the metastore of published index generations in
// PostgreSQL: which generations are uploading or live, and what every
// node that follows them serves and installs (publication.Metastore). It
// keeps its tables in the order store's database, through the order
// store's connection pool and transactions (postgres.DB).
package metastore
