-- Tool policies (Executor's /api/policies): a pattern over tool paths and what to do with a matching call.
-- position is a fractional-index key: lower sorts first and wins within its owner.
CREATE TABLE policy (
    id         VARCHAR(64)  NOT NULL PRIMARY KEY,
    owner      VARCHAR(8)   NOT NULL,
    pattern    VARCHAR      NOT NULL,
    action     VARCHAR(32)  NOT NULL,
    position   VARCHAR(200) NOT NULL,
    created_at BIGINT       NOT NULL,
    updated_at BIGINT       NOT NULL
);
