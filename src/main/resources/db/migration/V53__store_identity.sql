-- One random value per store, made once when the store is first migrated: replicas sharing the store share it, and a
-- connection's container on a Docker engine is named after it and the connection, so that replicas of two stores that
-- use one engine (staging and production on one host, two test runs) never take each other's containers for their own.
CREATE TABLE store_identity (
    id VARCHAR(64) NOT NULL PRIMARY KEY
);
INSERT INTO store_identity (id) VALUES (
    CAST(CAST(FLOOR(RANDOM() * 1000000000000000) AS BIGINT) AS VARCHAR(20)) || '-'
        || CAST(CAST(FLOOR(RANDOM() * 1000000000000000) AS BIGINT) AS VARCHAR(20)));
