-- One row per live replica sharing this store: renewed every few seconds. A row whose lease ran out belongs to a
-- replica that died without a goodbye; the first live peer to delete it removes what that replica left running.
CREATE TABLE instance_lease (
    instance_id VARCHAR(64)  NOT NULL PRIMARY KEY,
    address     VARCHAR(512) NOT NULL,
    started_at  BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL
);
