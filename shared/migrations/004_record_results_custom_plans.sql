-- record_results() plans its statements for the arrays it is given, every call. A cached
-- generic plan is built when a connection first calls it, often on tables that are still
-- nearly empty, and is kept until the next ANALYZE: on a fresh database that made each
-- batch about 9x slower once the tables had grown (7.1 vs 0.8 ms for 10 results, measured
-- with 40,000 sessions). A custom plan costs about 0.15 ms of planning per batch.
-- A later CREATE OR REPLACE FUNCTION record_results must repeat this SET clause: it
-- replaces the function's settings too. (Pool connections set it as well, shared/db.py.)
ALTER FUNCTION record_results(uuid[], uuid[], text[], text[], real[], jsonb[], text[],
                              integer[], text[], integer[])
    SET plan_cache_mode = force_custom_plan;
