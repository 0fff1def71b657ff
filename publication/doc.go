// Package publication owns publishing index generations and following
// them: a publisher uploads a finished generation to the object store and
// makes it live in the metastore in one step, removes what killed runs
// left and retires generations no node needs; a follower keeps a node's
// data directory on the newest live generation that installs, backs off
// damaged ones, reports itself by heartbeat, and answers the ordering
// gate during a rollout (the served generation or the one installing);
// the nodes listing says what every node serves.
//
// A publish uploads only the files whose content the object store does
// not hold yet: a manifest entry may name the object of an earlier live
// generation with the same size and SHA-256 (objectstore.File.Object),
// and a node takes such files from the generations it holds (hard links)
// and downloads only the rest. Objects stay under the name of the
// generation that uploaded them; retention deletes one only when no
// recorded publication names it (share.go says why and how).
//
// It reaches the object store and the metastore through its ports Blobs
// and Metastore (objectstore.Store and postgres/metastore implement them).
// A metastore that is also a Listener (postgres/metastore, by LISTEN and
// NOTIFY) wakes the follower the moment a publication goes live; the
// follower asks at its interval all the same, which sends its heartbeat
// and catches what a lost connection missed.
package publication
