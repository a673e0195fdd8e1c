-- The aggregator's fan-in in one round trip. Each statement of a VOLATILE plpgsql function
-- takes a fresh snapshot (READ COMMITTED), so after the row locks are granted the final
-- read sees every result other aggregators committed before us: whoever locks a session
-- last sees all of its results. The verdict is then written by a separate, guarded statement.
CREATE OR REPLACE FUNCTION record_results(
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
    status     text,
    components text[],
    results    jsonb,
    fresh      boolean
) LANGUAGE plpgsql VOLATILE AS $$
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
    SELECT s.id, s.tenant, s.status, s.components,
           coalesce((SELECT jsonb_object_agg(r.component, jsonb_build_object(
                        'status', r.status, 'score', r.score, 'data', r.data, 'error', r.error))
                     FROM component_results r WHERE r.session_id = s.id), '{}'::jsonb),
           s.id = ANY(coalesce(inserted, '{}'))
    FROM sessions s WHERE s.id = ANY(locked);
END
$$;
