-- The delivered PDFs in chunks of at most 256 KiB (postgres.ChunkSize),
-- so that neither a delivery nor a download holds a whole PDF in a
-- node's memory, and a download holds a pooled connection only for the
-- short query of each chunk, never while its client reads slowly.
--
-- Chunk rows rather than substring() reads of one bytea: a read would
-- stream either way (STORAGE EXTERNAL lets substring fetch only the
-- TOAST slices it needs), but a write could not: one bytea is inserted
-- whole, from one 20 MiB parameter, or grown by appending, which rewrites
-- the value each time. Rows are inserted one chunk at a time.
--
-- documents keeps one row per PDF, its size and when it was stored; it is
-- inserted after its chunks, in the same transaction (the foreign key is
-- checked at the commit), so that a document row always has every chunk.

-- +goose Up
CREATE TABLE document_chunks (
    sha256 text NOT NULL,
    seq    integer NOT NULL CHECK (seq >= 0 AND seq < 80),
    data   bytea NOT NULL CHECK (octet_length(data) BETWEEN 1 AND 262144),
    PRIMARY KEY (sha256, seq),
    FOREIGN KEY (sha256) REFERENCES documents (sha256) DEFERRABLE INITIALLY DEFERRED
);
ALTER TABLE document_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
INSERT INTO document_chunks (sha256, seq, data)
    SELECT d.sha256, s.seq, substring(d.pdf FROM s.seq * 262144 + 1 FOR 262144)
    FROM documents d, generate_series(0, (octet_length(d.pdf) - 1) / 262144) AS s(seq);
ALTER TABLE documents ADD COLUMN size bigint;
UPDATE documents SET size = octet_length(pdf);
ALTER TABLE documents ALTER COLUMN size SET NOT NULL;
ALTER TABLE documents ADD CONSTRAINT documents_size CHECK (size BETWEEN 1 AND 20971520);
ALTER TABLE documents DROP COLUMN pdf;

-- +goose Down
ALTER TABLE documents ADD COLUMN pdf bytea;
UPDATE documents d SET pdf = (SELECT string_agg(c.data, ''::bytea ORDER BY c.seq)
    FROM document_chunks c WHERE c.sha256 = d.sha256);
ALTER TABLE documents ALTER COLUMN pdf SET NOT NULL;
ALTER TABLE documents ADD CONSTRAINT documents_pdf_check CHECK (octet_length(pdf) <= 20971520);
ALTER TABLE documents ALTER COLUMN pdf SET STORAGE EXTERNAL;
ALTER TABLE documents DROP COLUMN size;
DROP TABLE document_chunks;
