// Package metastore is the metastore of published index generations in
// PostgreSQL: which generations are uploading or live, and what every
// node that follows them serves and installs (publication.Metastore). It
// keeps its tables in the order store's database, through the order
// store's connection pool and transactions (postgres.DB). Making a
// generation live notifies the channel companydocs_publication in the
// same transaction, so nodes that listen (publication.Listener) hear of it
// at its commit, on a connection of their own outside the pool. A publish
// holds the publishing lock (LockPublishing), a session-level advisory
// lock on a connection of its own too, so that publishes run one at a
// time across machines and a killed one lets go with its session.
package metastore
