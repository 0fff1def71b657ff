-- The order store: accounts, sessions, orders (with their history), the
-- unique keys of orders, the documents orders reference, the outbox and
-- the webhook endpoints, deliveries and their schedule.
--
-- Every rule that concurrent writers on several nodes could break is a
-- constraint here: one key hash per account, credits never below zero,
-- one order per Idempotency-Key of an account, one open order per
-- account, profile, document and plan. Orders and deliveries keep the
-- record the rules wrote (json: its bytes as written, nanosecond times)
-- beside the columns that constraints, indexes and queries need; the
-- store derives those columns from the record in one place.
-- Only features of PostgreSQL 13 are used.

-- +goose Up
CREATE TABLE accounts (
    name       text PRIMARY KEY,
    role       text NOT NULL CHECK (role IN ('client', 'operator')),
    credits    bigint NOT NULL CHECK (credits >= 0),
    key_hash   bytea NOT NULL CONSTRAINT accounts_key_hash UNIQUE,  -- sha256 of the API key; the key is never stored
    created_at timestamptz NOT NULL
);

CREATE TABLE sessions (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),  -- sha256 of the token
    account    text NOT NULL REFERENCES accounts (name) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked    boolean NOT NULL DEFAULT false,
    ended_by   text NOT NULL DEFAULT ''
);
CREATE INDEX sessions_account ON sessions (account, created_at, token_hash);

CREATE TABLE orders (
    id               text PRIMARY KEY,  -- sorts by creation time
    account          text NOT NULL REFERENCES accounts (name),
    status           text NOT NULL CHECK (status IN ('PREVIEW_READY', 'PAID', 'REQUESTED', 'DELIVERED', 'FAILED', 'CANCELLED')),
    company_profile_id text NOT NULL,
    document_type    text NOT NULL,
    plan_id          text NOT NULL,
    credits_charged  bigint NOT NULL CHECK (credits_charged >= 0),
    credits_refunded bigint NOT NULL CHECK (credits_refunded >= 0 AND credits_refunded <= credits_charged),
    idempotency_key  text,
    created_at       timestamptz NOT NULL,
    record           json NOT NULL  -- ordering.OrderRecord, history and document included
);
CREATE INDEX orders_account ON orders (account, id);
CREATE INDEX orders_status ON orders (status, id);  -- the operator's queue, oldest first

-- The Idempotency-Key of an account names one order for good. The order
-- is inserted later in the same transaction, hence the deferred key.
CREATE TABLE idempotency_keys (
    account  text NOT NULL REFERENCES accounts (name),
    key      text NOT NULL CHECK (key <> ''),
    order_id text NOT NULL UNIQUE REFERENCES orders (id) DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (account, key)
);

-- While an order is open (not terminal) it holds its slot, and no other
-- order of the account takes it; the terminal transition frees it.
CREATE TABLE open_orders (
    account       text NOT NULL REFERENCES accounts (name),
    profile_id    text NOT NULL,
    document_type text NOT NULL,
    plan_id       text NOT NULL,
    order_id      text NOT NULL UNIQUE REFERENCES orders (id) DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (account, profile_id, document_type, plan_id)
);

-- The delivered documents orders refer to (the files themselves are kept
-- outside the database).
CREATE TABLE document_refs (
    sha256   text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    order_id text NOT NULL REFERENCES orders (id),
    PRIMARY KEY (sha256, order_id)
);

-- Events of committed changes, until they are taken for delivery; ids
-- sort in commit order (appends are serialised by an advisory lock).
-- The payload is json, not jsonb: its bytes are kept as written.
CREATE TABLE outbox (
    id       text PRIMARY KEY,
    type     text NOT NULL,
    order_id text NOT NULL REFERENCES orders (id),
    account  text NOT NULL REFERENCES accounts (name),
    at       timestamptz NOT NULL,
    payload  json NOT NULL
);

CREATE TABLE webhook_endpoints (
    id           text PRIMARY KEY,
    account      text NOT NULL REFERENCES accounts (name) ON DELETE CASCADE,
    url          text NOT NULL,
    description  text NOT NULL DEFAULT '',
    secret       text NOT NULL CHECK (secret LIKE 'whsec\_%'),  -- in clear: every delivery is signed with it
    all_accounts boolean NOT NULL DEFAULT false,  -- an operator's endpoint
    created_at   timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account, id);

-- One event at one endpoint. scheduled_at is the schedule: when a pending
-- delivery is tried next (NULL once delivered or failed). A node that
-- picks a due delivery claims it (FOR UPDATE SKIP LOCKED) until
-- claimed_until: while another node's claim is live, a node leaves the
-- endpoint alone, and the claim of a node that died mid-attempt runs out
-- after the lease.
CREATE TABLE webhook_deliveries (
    endpoint_id   text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id      text NOT NULL,
    order_id      text NOT NULL REFERENCES orders (id),
    state         text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    created_at    timestamptz NOT NULL,
    scheduled_at  timestamptz,
    claimed_by    text,  -- the node (one open store) holding the claim
    claimed_until timestamptz,
    record        json NOT NULL,  -- ordering.DeliveryRecord: attempts and the signed body
    PRIMARY KEY (endpoint_id, event_id),
    CHECK ((claimed_by IS NULL) = (claimed_until IS NULL))
);
CREATE INDEX webhook_deliveries_schedule ON webhook_deliveries (endpoint_id, scheduled_at, event_id) WHERE scheduled_at IS NOT NULL;
CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries (endpoint_id, claimed_until) WHERE claimed_until IS NOT NULL;

-- +goose Down
DROP TABLE webhook_deliveries, webhook_endpoints, outbox, document_refs, open_orders, idempotency_keys, orders, sessions, accounts;
