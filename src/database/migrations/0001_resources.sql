-- Member data and the Idempotency-Keys of its creates (partner-api migrate, version 1).
--
-- resources: one row per thing of every resource kind (the API's tables, `api::table`), its
-- body the thing as the API answers it. A row belongs to a partner and a mode (live, or test
-- for what a pak_test_ key wrote); a row with no partner is shared (a catalogue). Ids are
-- compared byte by byte (COLLATE "C"), so that pages follow the order the in-process store
-- uses.
CREATE TABLE resources (
    kind text NOT NULL,
    id text COLLATE "C" NOT NULL,
    partner text,
    test boolean NOT NULL DEFAULT false,
    body jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, id)
);
CREATE INDEX resources_by_owner ON resources (kind, partner, test, id);

-- idempotency_keys: the key a create was sent with, whose it is (the partner and mode, or the
-- client's address), the SHA-256 of the request, and the answer, stored in the transaction
-- that creates the thing; kept 24 hours.
CREATE TABLE idempotency_keys (
    scope text NOT NULL,
    key text NOT NULL,
    request bytea NOT NULL,
    location text NOT NULL,
    body bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
