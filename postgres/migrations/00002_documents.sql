-- The delivered PDFs themselves, so that every node serves what any node
-- delivered (until now each node kept them as files in its own data
-- directory, and only document_refs was shared). A document is stored in
-- the transaction of the DELIVERED transition that refers to it, under its
-- SHA-256, once however many orders refer to it. It is never changed.
--
-- PDFs are compressed already: STORAGE EXTERNAL keeps them out of line
-- (TOAST) without a second, futile compression. The size cap is
-- ordering.MaxDocumentSize (20 MiB); bytea itself would take 1 GB.

-- +goose Up
CREATE TABLE documents (
    sha256    text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    pdf       bytea NOT NULL CHECK (octet_length(pdf) <= 20971520),
    stored_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE documents ALTER COLUMN pdf SET STORAGE EXTERNAL;

-- +goose Down
DROP TABLE documents;
