-- The table transport: a task, its result and the session's progress commit together.
--
-- A worker that completes a task with its result among what it published leaves the task
-- row `answered` (its result row is written in the same statement, shared/job_queue.py). The
-- task is completed by the transaction that settles the row carrying its result: an
-- aggregator's, which records the result (the session's progress, and its verdict when it
-- is the last) and completes the result row in one commit. So a task row is `completed`
-- exactly when its result is in the record; an aggregator cut off mid-batch leaves the
-- task `answered`, its result row claimable again, and nothing recorded.
--
-- A result dead-lettered instead (unknown session, bad signature, delivery limit) completes
-- its task too: the answer was read and settled. A media task's failure reports its four
-- results under the media task: any of them completes it.
--   answered   the task's result is written and waits for the fan-in (not claimable, not
--              leased: nobody runs it again)
ALTER TABLE job_queue DROP CONSTRAINT job_queue_status_check;
ALTER TABLE job_queue ADD CONSTRAINT job_queue_status_check
    CHECK (status IN ('pending', 'retry', 'running', 'answered', 'completed', 'error'));

-- The answered task of a result is found by its message id (`{session}:{component}`); the
-- aggregators' prune finds an answer left over (its result row deleted unsettled) by its age.
CREATE INDEX job_queue_answered ON job_queue (message_id) WHERE status = 'answered';

CREATE FUNCTION complete_answered_task() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A result's message id is `{session}:{component}:{attempt}`, its task's the first two.
    UPDATE job_queue SET status = 'completed', finished_at = clock_timestamp()
    WHERE status = 'answered'
      AND message_id IN (regexp_replace(NEW.message_id, ':[^:]*$', ''),
                         NEW.correlation_id || ':media_preprocess');
    RETURN NULL;
END
$$;

-- Result rows only: `{prefix}.results` and `{prefix}.results.urgent` (task queues end in a
-- plan number). Only the aggregators' role settles them; it may update every row.
CREATE TRIGGER job_queue_answer_settled AFTER UPDATE OF status ON job_queue
    FOR EACH ROW
    WHEN (OLD.status = 'running' AND NEW.status IN ('completed', 'error')
          AND NEW.message_id IS NOT NULL AND NEW.queue ~ '\.results(\.urgent)?$')
    EXECUTE FUNCTION complete_answered_task();
