-- Fact-check store for the claims component (issue 5). Self-contained: it needs
-- nothing from 001. Claims are matched by trigram similarity on `claim_norm`
-- (lower case, no diacritics, written by the loader), so Romanian text typed
-- without diacritics still meets its fact check.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE IF NOT EXISTS fact_checks (
    id           bigserial   PRIMARY KEY,
    claim        text        NOT NULL CHECK (length(claim) BETWEEN 3 AND 1000),
    claim_norm   text        NOT NULL,
    rating       text        NOT NULL
                 CHECK (rating IN ('false', 'misleading', 'mixed', 'unproven', 'true')),
    language     text        NOT NULL DEFAULT 'und',
    source       text        NOT NULL,
    url          text,
    summary      text,
    published_on date,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    -- One verdict per source and claim: reloading a file updates instead of duplicating.
    UNIQUE (source, claim_norm)
);

-- GIN trigram index: serves `claim_norm % $1`, the candidate filter of every lookup.
CREATE INDEX IF NOT EXISTS fact_checks_claim_norm_trgm
    ON fact_checks USING gin (claim_norm gin_trgm_ops);
