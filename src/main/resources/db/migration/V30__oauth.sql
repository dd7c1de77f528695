-- OAuth: clients (apps) that connections are authorized through, and what a connection made by an OAuth flow
-- carries. Tokens are credentials (table credential, sealed); a client's secret is sealed the same way.

CREATE TABLE oauth_client (
    owner              VARCHAR(8)   NOT NULL,
    slug               VARCHAR(200) NOT NULL,
    grant_type         VARCHAR(32)  NOT NULL,
    authorization_url  VARCHAR      NOT NULL,
    token_url          VARCHAR      NOT NULL,
    client_id          VARCHAR      NOT NULL,
    client_secret      VARCHAR,
    resource           VARCHAR,
    origin_kind        VARCHAR(32)  NOT NULL,
    origin_integration VARCHAR(200),
    created_at         BIGINT       NOT NULL,
    PRIMARY KEY (owner, slug)
);

ALTER TABLE connection ADD COLUMN oauth_client VARCHAR(200);
ALTER TABLE connection ADD COLUMN oauth_client_owner VARCHAR(8);
ALTER TABLE connection ADD COLUMN oauth_scope VARCHAR;
ALTER TABLE connection ADD COLUMN expires_at BIGINT;
