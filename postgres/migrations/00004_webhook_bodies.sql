-- The signed body of each event with webhook deliveries, stored once
-- however many endpoints receive the event: until now every delivery
-- record kept its own copy (its last field, "body"), ten copies for an
-- account with ten endpoints, each kept for the 30 days a finished
-- delivery is kept. refs counts the deliveries that refer to the body;
-- the store decrements it for each delivery it deletes and deletes the
-- body with the last (a count, not a NOT EXISTS check, since two nodes
-- pruning two deliveries of one event at READ COMMITTED would each see
-- the other's).
--
-- The bodies move out of the existing records as text, with their bytes
-- as they were stored, so that a retried delivery carries the signature
-- it had. The json operators (->, json_each) cannot be used: they refuse
-- a string holding \u0000, which a note may. A record is what
-- ordering.DeliveryRecord encodes to (encoding/json: no spaces, fields in
-- order, "body" last); one that is not is refused rather than guessed.

-- +goose Up
CREATE TABLE webhook_bodies (
    event_id text PRIMARY KEY,
    refs     integer NOT NULL CHECK (refs >= 0),
    body     json NOT NULL
);

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE strpos(record::text, ',"body":') = 0 OR right(record::text, 1) <> '}') THEN
        RAISE EXCEPTION 'a webhook delivery record does not end with its "body"; move the bodies by hand';
    END IF;
END $$;
-- +goose StatementEnd

INSERT INTO webhook_bodies (event_id, refs, body)
SELECT DISTINCT ON (event_id) event_id, count(*) OVER (PARTITION BY event_id),
    substr(record::text, strpos(record::text, ',"body":') + 8, length(record::text) - strpos(record::text, ',"body":') - 8)::json
FROM webhook_deliveries ORDER BY event_id, endpoint_id;

UPDATE webhook_deliveries SET record = (left(record::text, strpos(record::text, ',"body":') - 1) || '}')::json;

ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_body FOREIGN KEY (event_id) REFERENCES webhook_bodies (event_id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- +goose Down
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_body;
DROP INDEX webhook_deliveries_event;
UPDATE webhook_deliveries d SET record = (left(d.record::text, length(d.record::text) - 1) || ',"body":' || b.body::text || '}')::json
FROM webhook_bodies b WHERE b.event_id = d.event_id;
DROP TABLE webhook_bodies;
