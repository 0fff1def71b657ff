-- Watches: an account's standing interest in one company profile. Each
-- new index generation is compared with the profile as the account last
-- heard of it (the record's snapshot); the comparison, its event and the
-- watch's new generation commit in one transaction, and the watch's row
-- lock keeps two nodes swapping the same generation from both reporting
-- one change.
--
-- The events of watches concern no order: outbox and webhook_deliveries
-- now allow an event without one (order_id NULL).

-- +goose Up
CREATE TABLE watches (
    id         text PRIMARY KEY,  -- sorts by creation time
    account    text NOT NULL REFERENCES accounts (name) ON DELETE CASCADE,
    profile_id text NOT NULL,
    generation text NOT NULL,  -- the index generation last compared
    ended      boolean NOT NULL,
    record     json NOT NULL,  -- ordering.WatchRecord, the snapshot included
    CONSTRAINT watches_account_profile UNIQUE (account, profile_id)
);
CREATE INDEX watches_account ON watches (account, id);

ALTER TABLE outbox ALTER COLUMN order_id DROP NOT NULL;
ALTER TABLE webhook_deliveries ALTER COLUMN order_id DROP NOT NULL;

-- +goose Down
DELETE FROM webhook_deliveries WHERE order_id IS NULL;
DELETE FROM outbox WHERE order_id IS NULL;
ALTER TABLE webhook_deliveries ALTER COLUMN order_id SET NOT NULL;
ALTER TABLE outbox ALTER COLUMN order_id SET NOT NULL;
DROP TABLE watches;
