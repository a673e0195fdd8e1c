-- The PostgreSQL transport (TRANSPORT=postgres, shared/job_queue.py): each message RabbitMQ
-- carries in the other mode is a row here, in a queue of the same name ({prefix}.{component}
-- .{plan} for tasks, {prefix}.results[.urgent] for results, {prefix}_dlq for dead letters).
--   pending    published, waiting for a consumer
--   retry      published again after a failure, not before scheduled_for (backoff)
--   running    claimed by `claimed_by` until lease_until; the consumer renews the lease while
--              it holds the row, so a crashed consumer's rows return once it lapses
--   completed  acknowledged
--   error      a dead letter: `reason` says why; `verdict dlq` lists and replays them
CREATE TABLE job_queue (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue         text        NOT NULL,
    routing_key   text        NOT NULL,
    status        text        NOT NULL DEFAULT 'pending'
                              CHECK (status IN ('pending', 'retry', 'running', 'completed', 'error')),
    priority      smallint    NOT NULL DEFAULT 0,
    body          bytea       NOT NULL,
    headers       jsonb       NOT NULL DEFAULT '{}',
    message_id    text,
    correlation_id text,
    content_type  text,
    deliveries    integer     NOT NULL DEFAULT 0,
    enqueued_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    scheduled_for timestamptz NOT NULL DEFAULT clock_timestamp(),
    claimed_by    text,
    lease_until   timestamptz,
    reason        text,
    finished_at   timestamptz
);

-- What a consumer may claim, per queue, oldest first; leases that lapsed; dead letters.
CREATE INDEX job_queue_ready ON job_queue (queue, scheduled_for) WHERE status IN ('pending', 'retry');
CREATE INDEX job_queue_leased ON job_queue (queue, lease_until) WHERE status = 'running';
CREATE INDEX job_queue_dead ON job_queue (queue, id) WHERE status = 'error';
CREATE INDEX job_queue_finished ON job_queue (finished_at) WHERE status = 'completed';

-- Consumers LISTEN on `job_queue`; the payload is the queue a row became ready in.
CREATE FUNCTION notify_job_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status IN ('pending', 'retry') THEN
        PERFORM pg_notify('job_queue', NEW.queue);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_queue_ready AFTER INSERT OR UPDATE OF status ON job_queue
    FOR EACH ROW EXECUTE FUNCTION notify_job_queue();
