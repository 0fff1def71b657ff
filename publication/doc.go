// Package publication owns publishing index generations and following
// them: a publisher uploads a finished generation to the object store and
// makes it live in the metastore in one step, removes what killed runs
// left and retires generations no node needs; a follower keeps a node's
// data directory on the newest live generation that installs, backs off
// damaged ones, reports itself by heartbeat, and answers the ordering
// gate during a rollout (the served generation or the one installing);
// the nodes listing says what every node serves. It reaches the object
// store and the metastore through its ports Blobs and Metastore
// (objectstore.Store and postgres/metastore implement them).
package publication
