-- A node reports while it downloads and installs a generation, not only
-- what it serves: retention never deletes a generation a node is
-- installing, and an operator sees what a node is fetching and which
-- published generation it found damaged (companydocs nodes).

-- +goose Up
ALTER TABLE index_nodes
    ADD COLUMN installing text NOT NULL DEFAULT '',  -- the generation it downloads or installs; '' none
    ADD COLUMN damaged    text NOT NULL DEFAULT '';  -- a published generation it found damaged, and why; '' none

-- +goose Down
ALTER TABLE index_nodes DROP COLUMN damaged, DROP COLUMN installing;
