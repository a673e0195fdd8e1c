-- Settings per tenant (shared/tenant_settings.py, docs/architecture.md §6.5): one row per
-- tenant, its version bumped by each change; readers cache them and are told of a change
-- by NOTIFY on channel `tenant_settings` (the payload is the tenant).
CREATE TABLE tenant_settings (
    tenant     text        PRIMARY KEY,
    version    bigint      NOT NULL CHECK (version >= 1),
    settings   jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION notify_tenant_settings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tenant_settings', coalesce(NEW.tenant, OLD.tenant));
    RETURN NULL;
END
$$;

CREATE TRIGGER tenant_settings_changed AFTER INSERT OR UPDATE OR DELETE ON tenant_settings
    FOR EACH ROW EXECUTE FUNCTION notify_tenant_settings();

-- The version a session ran with, and what the aggregator needs of it (verdict weights,
-- review rules), kept with the session so finalizing needs no lookup and a later change
-- does not alter a session already accepted. NULL: the deployment's settings.
ALTER TABLE sessions ADD COLUMN settings_version bigint, ADD COLUMN policy jsonb;
ALTER TABLE component_results ADD COLUMN settings_version bigint;

-- The fan-in again: each result's settings version, and each session's policy returned.
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
    p_ms         integer[],
    p_versions   bigint[]
) RETURNS TABLE (
    session_id uuid,
    tenant     text,
    plan       smallint,
    status     text,
    components text[],
    results    jsonb,
    fresh      boolean,
    policy     jsonb
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
                                             error, attempt, worker_id, processing_ms,
                                             settings_version)
        SELECT u.sid, session_day(u.sid), u.component, u.status, u.score, u.data, u.error,
               u.attempt, u.worker_id, u.ms, u.version
        FROM unnest(p_sessions, p_components, p_statuses, p_scores, p_data, p_errors,
                    p_attempts, p_workers, p_ms, p_versions)
            AS u(sid, component, status, score, data, error, attempt, worker_id, ms, version)
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
           s.id = ANY(coalesce(inserted, '{}')),
           s.policy
    FROM sessions s WHERE s.id = ANY(locked) AND s.day = ANY(days);
END
$$;
