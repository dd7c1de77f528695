-- Tether's store. Portable between H2 (embedded default) and PostgreSQL: VARCHAR without a length is
-- unbounded text in both; instants are epoch milliseconds.

CREATE TABLE integration (
    slug              VARCHAR(200) NOT NULL PRIMARY KEY,
    name              VARCHAR      NOT NULL,
    description       VARCHAR      NOT NULL,
    config            VARCHAR      NOT NULL, -- JSON: {"transport":"stdio",...} or {"transport":"remote",...}
    config_changed_at BIGINT       NOT NULL,
    created_at        BIGINT       NOT NULL
);

CREATE TABLE connection (
    owner             VARCHAR(8)   NOT NULL,
    integration       VARCHAR(200) NOT NULL REFERENCES integration (slug) ON DELETE CASCADE,
    name              VARCHAR(200) NOT NULL,
    template          VARCHAR      NOT NULL,
    identity_label    VARCHAR,
    health_status     VARCHAR(16),
    health_checked_at BIGINT,
    health_detail     VARCHAR,
    created_at        BIGINT       NOT NULL,
    PRIMARY KEY (owner, integration, name)
);

-- Secrets apart from everything the API shows.
CREATE TABLE credential (
    owner       VARCHAR(8)   NOT NULL,
    integration VARCHAR(200) NOT NULL,
    connection  VARCHAR(200) NOT NULL,
    name        VARCHAR      NOT NULL,
    secret      VARCHAR      NOT NULL,
    PRIMARY KEY (owner, integration, connection, name),
    FOREIGN KEY (owner, integration, connection) REFERENCES connection (owner, integration, name) ON DELETE CASCADE
);

-- The last good tool catalog of a connection, as one JSON array: always replaced whole.
CREATE TABLE catalog (
    owner       VARCHAR(8)   NOT NULL,
    integration VARCHAR(200) NOT NULL,
    connection  VARCHAR(200) NOT NULL,
    synced_at   BIGINT       NOT NULL,
    tools       VARCHAR      NOT NULL,
    PRIMARY KEY (owner, integration, connection),
    FOREIGN KEY (owner, integration, connection) REFERENCES connection (owner, integration, name) ON DELETE CASCADE
);
