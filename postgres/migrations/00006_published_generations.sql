-- The metastore of published index generations: an ingest uploads a
-- finished generation to the object store and records it here; nodes
-- follow the newest live one. A generation is visible to nodes only once
-- its row is live, which the publisher sets in one transaction after
-- every object was uploaded and checked; a publish killed before leaves
-- an uploading row, whose objects the next publish removes.
--
-- Each node records the generation it serves and a heartbeat, so that an
-- operator sees which node serves what and retention never deletes a
-- generation a node still serves.

-- +goose Up
CREATE TABLE published_generations (
    name         text PRIMARY KEY,  -- gen-..., sorts by creation time
    state        text NOT NULL CHECK (state IN ('uploading', 'live')),
    manifest     jsonb NOT NULL,    -- every file's path, size and SHA-256
    bytes        bigint NOT NULL,
    profiles     bigint NOT NULL,
    created_at   timestamptz NOT NULL,  -- when the publish began
    published_at timestamptz            -- when it became live
);

CREATE TABLE index_nodes (
    node         text PRIMARY KEY,
    generation   text NOT NULL,  -- the generation it serves; '' none yet
    behind       integer NOT NULL,  -- live publications newer than it
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE index_nodes;
DROP TABLE published_generations;
