-- The prune of applied payment event ids (older than 30 days, hourly, a
-- thousand a transaction) finds them by the time they were applied: an
-- index on it, so that the prune reads the old rows only instead of
-- scanning every id applied in the last 30 days each hour.

-- +goose Up
CREATE INDEX payment_events_applied ON payment_events (applied_at);

-- +goose Down
DROP INDEX payment_events_applied;
