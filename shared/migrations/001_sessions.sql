-- Sessions, their component results and their verdicts: the system of record (docs/architecture.md §6.1).
CREATE TABLE sessions (
    id              uuid PRIMARY KEY,
    tenant          text        NOT NULL,
    user_id         text,
    plan            smallint    NOT NULL CHECK (plan BETWEEN 1 AND 6),
    input_type      text        NOT NULL,
    input           jsonb       NOT NULL,
    components      text[]      NOT NULL,
    status          text        NOT NULL DEFAULT 'processing'
                    CHECK (status IN ('processing', 'completed', 'partial', 'failed')),
    mode            text        NOT NULL DEFAULT 'async' CHECK (mode IN ('async', 'sync')),
    idempotency_key text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    deadline_at     timestamptz NOT NULL,
    finished_at     timestamptz,
    UNIQUE (tenant, idempotency_key)
);

-- The janitor looks only at unfinished sessions, oldest deadline first.
CREATE INDEX sessions_open_deadline ON sessions (deadline_at) WHERE status = 'processing';
CREATE INDEX sessions_tenant_created ON sessions (tenant, created_at DESC);

CREATE TABLE component_results (
    session_id    uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    component     text        NOT NULL,
    status        text        NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')),
    score         real,
    data          jsonb       NOT NULL DEFAULT '{}',
    error         text,
    attempt       integer     NOT NULL DEFAULT 1,
    worker_id     text,
    processing_ms integer,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, component)
);

CREATE TABLE verdicts (
    session_id  uuid        PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    score       real,
    label       text        NOT NULL,
    confidence  real        NOT NULL,
    explanation jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
