-- Journals of paused executions: what lets any replica rebuild one by replay after a restart or a death. A row is
-- 'paused' (pause_id is the id its clients hold) or 'running' (a resume claimed it: compare-and-set on version).
-- code, pause and every segment's entries are sealed (SecretBox), bound to their row. expires_at bounds every row:
-- a pause's expiry, or for a claimed one its run's time limit; any replica deletes rows past it.
CREATE TABLE execution_journal (
    journal_id VARCHAR(64)  NOT NULL PRIMARY KEY,
    pause_id   VARCHAR(128) UNIQUE,
    state      VARCHAR(16)  NOT NULL,
    holder     VARCHAR(128) NOT NULL,
    version    BIGINT       NOT NULL,
    code       VARCHAR      NOT NULL,
    pause      VARCHAR,
    origin     VARCHAR(256),
    segments   INTEGER      NOT NULL,
    bytes      BIGINT       NOT NULL,
    expires_at BIGINT       NOT NULL
);
CREATE INDEX execution_journal_expiry ON execution_journal (expires_at);
-- What the execution added to its journal between two pauses, one row per pause: each answer is written once.
CREATE TABLE execution_journal_segment (
    journal_id VARCHAR(64) NOT NULL REFERENCES execution_journal (journal_id) ON DELETE CASCADE,
    seq        INTEGER     NOT NULL,
    entries    VARCHAR     NOT NULL,
    PRIMARY KEY (journal_id, seq)
);
