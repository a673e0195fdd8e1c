-- Retention (issue 13): sessions and everything hanging off them (component_results,
-- verdicts, review_queue) are partitioned by the session's day, so old days are dropped as
-- whole partitions (`verdict db prune`, shared/partitions.py) instead of deleted row by row.
--
-- The partition key `day` is derived from the session id: new ids are UUIDv7
-- (shared/sessions.py), whose first 48 bits are the creation time in milliseconds, so a
-- lookup by id alone can name its partition (`day = session_day(id)`, folded by the planner:
-- one partition probed, not one per day). Ids of any other version (every session created
-- before this migration) have day 1970-01-01 and live in the `_legacy` partitions, which
-- prune drops once none of their sessions is within the retention.
--
-- A unique constraint on a partitioned table must contain the partition key, so the
-- tenant's Idempotency-Key moves to its own small table (idempotency_keys), which keeps
-- keys unique across days; prune deletes the keys of the days it drops.
--
-- No foreign keys between them: dropping a partition that holds one takes an ACCESS
-- EXCLUSIVE lock on the referenced parent (all of `sessions`), which waits for every reader
-- and stalls everyone queued behind it. Rows hang off a session by construction instead:
-- record_results() inserts results only for sessions it has locked, verdicts and review
-- items are written by the statement that finalizes their session, and deleting a session
-- (shared/sessions.py `delete`) deletes what hangs off it.
--
-- This migration copies the four tables (they are locked meanwhile).

CREATE FUNCTION session_day(id uuid) RETURNS date
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN substr(id::text, 15, 1) = '7'
    THEN date '1970-01-01'
         + (('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint / 86400000)::int
    ELSE date '1970-01-01' END;

-- The days of a batch of sessions, for `day = ANY(session_days($1))`.
CREATE FUNCTION session_days(ids uuid[]) RETURNS date[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ARRAY(SELECT DISTINCT session_day(u) FROM unnest(ids) AS u);

ALTER TABLE review_queue RENAME TO review_queue_007;
ALTER TABLE verdicts RENAME TO verdicts_007;
ALTER TABLE component_results RENAME TO component_results_007;
ALTER TABLE sessions RENAME TO sessions_007;
-- Index and constraint names are per schema: the old ones go before the new tables take them.
ALTER TABLE review_queue_007 DROP CONSTRAINT review_queue_pkey CASCADE;
ALTER TABLE verdicts_007 DROP CONSTRAINT verdicts_pkey CASCADE;
ALTER TABLE component_results_007 DROP CONSTRAINT component_results_pkey CASCADE;
ALTER TABLE sessions_007 DROP CONSTRAINT sessions_pkey CASCADE;
ALTER TABLE sessions_007 DROP CONSTRAINT sessions_tenant_idempotency_key_key;
DROP INDEX sessions_open_deadline, sessions_tenant_created, sessions_open_by_tenant,
           review_queue_open;

CREATE TABLE sessions (
    id              uuid        NOT NULL,
    day             date        NOT NULL,  -- session_day(id)
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
    request_hash    text,
    PRIMARY KEY (id, day)
) PARTITION BY RANGE (day);

CREATE INDEX sessions_open_deadline ON sessions (deadline_at) WHERE status = 'processing';
CREATE INDEX sessions_tenant_created ON sessions (tenant, created_at DESC);
CREATE INDEX sessions_open_by_tenant ON sessions (tenant) WHERE status = 'processing';

CREATE TABLE component_results (
    session_id    uuid        NOT NULL,
    day           date        NOT NULL,
    component     text        NOT NULL,
    status        text        NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')),
    score         real,
    data          jsonb       NOT NULL DEFAULT '{}',
    error         text,
    attempt       integer     NOT NULL DEFAULT 1,
    worker_id     text,
    processing_ms integer,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, day, component)
) PARTITION BY RANGE (day);

CREATE TABLE verdicts (
    session_id  uuid        NOT NULL,
    day         date        NOT NULL,
    score       real,
    label       text        NOT NULL,
    confidence  real        NOT NULL,
    explanation jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE review_queue (
    session_id     uuid        NOT NULL,
    day            date        NOT NULL,
    tenant         text        NOT NULL,
    plan           smallint    NOT NULL,
    label          text        NOT NULL,
    score          real,
    confidence     real        NOT NULL,
    reasons        text[]      NOT NULL,
    queued_at      timestamptz NOT NULL DEFAULT now(),
    status         text        NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'claimed', 'confirmed', 'overridden')),
    claimed_by     text,
    claimed_at     timestamptz,
    reviewed_label text,
    note           text,
    reviewed_by    text,
    reviewed_at    timestamptz,
    CHECK ((status IN ('claimed', 'confirmed', 'overridden')) = (claimed_by IS NOT NULL)),
    CHECK ((status IN ('confirmed', 'overridden')) = (reviewed_at IS NOT NULL)),
    PRIMARY KEY (session_id, day)
) PARTITION BY RANGE (day);

CREATE INDEX review_queue_open ON review_queue (queued_at) WHERE status IN ('pending', 'claimed');

-- One session per tenant and key, whatever its day.
CREATE TABLE idempotency_keys (
    tenant       text NOT NULL,
    key          text NOT NULL,
    session_id   uuid NOT NULL,
    day          date NOT NULL,  -- the session's, so prune drops its keys with it
    request_hash text,
    PRIMARY KEY (tenant, key)
);
CREATE INDEX idempotency_keys_day ON idempotency_keys (day);

-- Creates the missing day partitions of the four tables from `first_day` to `last_day`, and
-- the legacy ones when missing (prune drops them once their sessions are past retention;
-- an id other than UUIDv7 then still has a home). SECURITY DEFINER: the aggregators
-- (application role, no DDL) keep the days ahead ready through it. A short lock_timeout:
-- creating a partition briefly locks its parent, and no caller may queue traffic behind
-- itself; it tries again later.
CREATE FUNCTION create_day_partitions(first_day date, last_day date) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp SET lock_timeout = '2s' AS $$
DECLARE
    d     date;
    t     text;
    made  integer := 0;
BEGIN
    -- Two callers at once would both find a day missing; one creates it.
    PERFORM pg_advisory_xact_lock(hashtext('create_day_partitions'));
    FOREACH t IN ARRAY ARRAY['sessions', 'component_results', 'verdicts', 'review_queue'] LOOP
        IF to_regclass(format('%I', t || '_legacy')) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (MINVALUE) TO (%L)',
                           t || '_legacy', t, date '1970-01-02');
            made := made + 1;
        END IF;
        FOR d IN SELECT generate_series(first_day, last_day, interval '1 day')::date LOOP
            IF to_regclass(format('%I', t || '_' || to_char(d, 'YYYYMMDD'))) IS NULL THEN
                EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                               t || '_' || to_char(d, 'YYYYMMDD'), t, d, d + 1);
                made := made + 1;
            END IF;
        END LOOP;
    END LOOP;
    RETURN made;
END
$$;
REVOKE EXECUTE ON FUNCTION create_day_partitions(date, date) FROM PUBLIC;

-- Yesterday to a week ahead (the janitor keeps PARTITION_DAYS_AHEAD ready from then on),
-- and any day an existing UUIDv7 session needs.
SELECT create_day_partitions(d - 1, d + 7) FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS d) AS today;
SELECT create_day_partitions(min(session_day(id)), max(session_day(id)))
FROM sessions_007 WHERE session_day(id) > date '1970-01-01';

INSERT INTO sessions (id, day, tenant, user_id, plan, input_type, input, components, status,
                      mode, idempotency_key, created_at, deadline_at, finished_at, request_hash)
SELECT id, session_day(id), tenant, user_id, plan, input_type, input, components, status,
       mode, idempotency_key, created_at, deadline_at, finished_at, request_hash
FROM sessions_007;
INSERT INTO component_results (session_id, day, component, status, score, data, error,
                               attempt, worker_id, processing_ms, recorded_at)
SELECT session_id, session_day(session_id), component, status, score, data, error, attempt,
       worker_id, processing_ms, recorded_at
FROM component_results_007;
INSERT INTO verdicts (session_id, day, score, label, confidence, explanation, created_at)
SELECT session_id, session_day(session_id), score, label, confidence, explanation, created_at
FROM verdicts_007;
INSERT INTO review_queue (session_id, day, tenant, plan, label, score, confidence, reasons,
                          queued_at, status, claimed_by, claimed_at, reviewed_label, note,
                          reviewed_by, reviewed_at)
SELECT session_id, session_day(session_id), tenant, plan, label, score, confidence, reasons,
       queued_at, status, claimed_by, claimed_at, reviewed_label, note, reviewed_by,
       reviewed_at
FROM review_queue_007;
INSERT INTO idempotency_keys (tenant, key, session_id, day, request_hash)
SELECT tenant, idempotency_key, id, session_day(id), request_hash
FROM sessions_007 WHERE idempotency_key IS NOT NULL;

DROP TABLE review_queue_007, verdicts_007, component_results_007, sessions_007;

-- The fan-in, now naming each session's partition: the locks and reads probe one
-- partition per day in the batch. Same result type as migration 007; its SET clause again.
DROP FUNCTION record_results(uuid[], uuid[], text[], text[], real[], jsonb[], text[],
                             integer[], text[], integer[]);

CREATE FUNCTION record_results(
    p_lock       uuid[],   -- the sessions to lock and report on
    p_sessions   uuid[],   -- then one array element per result, all of equal length
    p_components text[],
    p_statuses   text[],
    p_scores     real[],
    p_data       jsonb[],
    p_errors     text[],
    p_attempts   integer[],
    p_workers    text[],
    p_ms         integer[]
) RETURNS TABLE (
    session_id uuid,
    tenant     text,
    plan       smallint,
    status     text,
    components text[],
    results    jsonb,
    fresh      boolean
) LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    days     date[] := session_days(p_lock);
    locked   uuid[];
    inserted uuid[];
BEGIN
    -- Lock in id order so that two aggregators never deadlock on a pair of sessions.
    SELECT array_agg(l.id) INTO locked FROM (
        SELECT s.id FROM sessions s WHERE s.id = ANY(p_lock) AND s.day = ANY(days)
        ORDER BY s.id FOR UPDATE
    ) l;
    WITH ins AS (
        INSERT INTO component_results AS cr (session_id, day, component, status, score, data,
                                             error, attempt, worker_id, processing_ms)
        SELECT u.sid, session_day(u.sid), u.component, u.status, u.score, u.data, u.error,
               u.attempt, u.worker_id, u.ms
        FROM unnest(p_sessions, p_components, p_statuses, p_scores, p_data, p_errors,
                    p_attempts, p_workers, p_ms)
            AS u(sid, component, status, score, data, error, attempt, worker_id, ms)
        WHERE u.sid = ANY(locked)
        ON CONFLICT ON CONSTRAINT component_results_pkey DO NOTHING
        RETURNING cr.session_id
    )
    SELECT array_agg(DISTINCT ins.session_id) INTO inserted FROM ins;
    RETURN QUERY
    SELECT s.id, s.tenant, s.plan, s.status, s.components,
           coalesce((SELECT jsonb_object_agg(r.component, jsonb_build_object(
                        'status', r.status, 'score', r.score, 'data', r.data, 'error', r.error))
                     FROM component_results r
                     WHERE r.session_id = s.id AND r.day = s.day AND r.day = ANY(days)),
                    '{}'::jsonb),
           s.id = ANY(coalesce(inserted, '{}'))
    FROM sessions s WHERE s.id = ANY(locked) AND s.day = ANY(days);
END
$$;
