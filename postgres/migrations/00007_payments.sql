-- Payments through a provider (Stripe): the ids of the provider's events
-- applied, each once (its row is inserted in the transaction of the
-- order's change, so that two nodes receiving one event apply it once),
-- and the refunds to ask of a provider with when each is due. A claim
-- moves due_at by the lease (FOR UPDATE SKIP LOCKED), so that no two
-- nodes ask at once and a node that died mid-attempt is retried.

-- +goose Up
CREATE TABLE payment_events (
    provider   text NOT NULL,
    event_id   text NOT NULL,
    applied_at timestamptz NOT NULL,
    PRIMARY KEY (provider, event_id)
);

CREATE TABLE refunds_due (
    order_id text PRIMARY KEY REFERENCES orders (id),
    due_at   timestamptz NOT NULL
);
CREATE INDEX refunds_due_at ON refunds_due (due_at, order_id);

-- +goose Down
DROP TABLE refunds_due;
DROP TABLE payment_events;
