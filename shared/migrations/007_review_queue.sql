-- Human review of verdicts (shared/reviews.py): the fan-in queues a verdict here, in the
-- statement that writes it, when the review policy (shared/review_policy.py) says so; a
-- reviewer claims it and confirms or overrides its label.
CREATE TABLE review_queue (
    session_id     uuid        PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    tenant         text        NOT NULL,
    plan           smallint    NOT NULL,
    label          text        NOT NULL,  -- the verdict's label as computed
    score          real,
    confidence     real        NOT NULL,
    reasons        text[]      NOT NULL,  -- why it was queued: low_confidence, label_at_least
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
    CHECK ((status IN ('confirmed', 'overridden')) = (reviewed_at IS NOT NULL))
);

-- The reviewers' queue, oldest first: only open items are indexed (claimed ones too, since
-- an expired claim returns to the queue), so the index stays as small as the backlog.
CREATE INDEX review_queue_open ON review_queue (queued_at) WHERE status IN ('pending', 'claimed');

-- The fan-in needs each session's plan for the review policy: record_results() now returns
-- it. Its result type changes, so it is dropped and created again (with the setting of
-- migration 004, which a new function does not inherit).
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
    locked   uuid[];
    inserted uuid[];
BEGIN
    -- Lock in id order so that two aggregators never deadlock on a pair of sessions.
    SELECT array_agg(l.id) INTO locked FROM (
        SELECT s.id FROM sessions s WHERE s.id = ANY(p_lock) ORDER BY s.id FOR UPDATE
    ) l;
    WITH ins AS (
        INSERT INTO component_results AS cr (session_id, component, status, score, data, error,
                                             attempt, worker_id, processing_ms)
        SELECT u.* FROM unnest(p_sessions, p_components, p_statuses, p_scores, p_data, p_errors,
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
                     FROM component_results r WHERE r.session_id = s.id), '{}'::jsonb),
           s.id = ANY(coalesce(inserted, '{}'))
    FROM sessions s WHERE s.id = ANY(locked);
END
$$;
