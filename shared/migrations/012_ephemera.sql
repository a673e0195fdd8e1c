-- What Redis holds for a deployment that runs without it (TRANSPORT=postgres and REDIS_URL
-- unset, shared/ephemera.py): short-lived values under the same key names (shared/keys.py),
-- each until `expires_at`: worker heartbeats, the attempts of a session's tasks, console
-- sign-outs, rate-limit windows, a media task's extracted text. A read ignores what expired;
-- the aggregators delete it.
CREATE TABLE ephemera (
    key        text        PRIMARY KEY,
    value      jsonb       NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE INDEX ephemera_expires ON ephemera (expires_at);
