-- Rows owned by a user carry that user's subject, so that two users' personal connections of one name are two rows
-- (Executor's owner model: org rows have the subject '', user rows their user's). Every user row an older Tether
-- wrote belongs to the daemon's single user, 'local'. The tables whose primary key gains the subject are made anew
-- and filled from the old ones (portable between H2 and PostgreSQL, whose constraint names differ); stored secrets
-- stay sealed as they were, bound to the same row names ('user/...' is the local user's).

CREATE TABLE connection_v2 (
    owner              VARCHAR(8)   NOT NULL,
    subject            VARCHAR(255) NOT NULL,
    integration        VARCHAR(200) NOT NULL,
    name               VARCHAR(200) NOT NULL,
    template           VARCHAR      NOT NULL,
    identity_label     VARCHAR,
    health_status      VARCHAR(16),
    health_checked_at  BIGINT,
    health_detail      VARCHAR,
    created_at         BIGINT       NOT NULL,
    oauth_client       VARCHAR(200),
    oauth_client_owner VARCHAR(8),
    oauth_scope        VARCHAR,
    expires_at         BIGINT,
    CONSTRAINT pk_connection PRIMARY KEY (owner, subject, integration, name),
    CONSTRAINT fk_connection_integration FOREIGN KEY (integration) REFERENCES integration (slug) ON DELETE CASCADE
);
INSERT INTO connection_v2 (owner, subject, integration, name, template, identity_label, health_status, health_checked_at,
        health_detail, created_at, oauth_client, oauth_client_owner, oauth_scope, expires_at)
    SELECT owner, CASE WHEN owner = 'user' THEN 'local' ELSE '' END, integration, name, template, identity_label,
        health_status, health_checked_at, health_detail, created_at, oauth_client, oauth_client_owner, oauth_scope, expires_at
    FROM connection;

CREATE TABLE credential_v2 (
    owner       VARCHAR(8)   NOT NULL,
    subject     VARCHAR(255) NOT NULL,
    integration VARCHAR(200) NOT NULL,
    connection  VARCHAR(200) NOT NULL,
    name        VARCHAR      NOT NULL,
    secret      VARCHAR      NOT NULL,
    CONSTRAINT pk_credential PRIMARY KEY (owner, subject, integration, connection, name),
    CONSTRAINT fk_credential_connection FOREIGN KEY (owner, subject, integration, connection)
        REFERENCES connection_v2 (owner, subject, integration, name) ON DELETE CASCADE
);
INSERT INTO credential_v2 (owner, subject, integration, connection, name, secret)
    SELECT owner, CASE WHEN owner = 'user' THEN 'local' ELSE '' END, integration, connection, name, secret FROM credential;

CREATE TABLE catalog_v2 (
    owner       VARCHAR(8)   NOT NULL,
    subject     VARCHAR(255) NOT NULL,
    integration VARCHAR(200) NOT NULL,
    connection  VARCHAR(200) NOT NULL,
    synced_at   BIGINT       NOT NULL,
    tools       VARCHAR      NOT NULL,
    CONSTRAINT pk_catalog PRIMARY KEY (owner, subject, integration, connection),
    CONSTRAINT fk_catalog_connection FOREIGN KEY (owner, subject, integration, connection)
        REFERENCES connection_v2 (owner, subject, integration, name) ON DELETE CASCADE
);
INSERT INTO catalog_v2 (owner, subject, integration, connection, synced_at, tools)
    SELECT owner, CASE WHEN owner = 'user' THEN 'local' ELSE '' END, integration, connection, synced_at, tools FROM catalog;

DROP TABLE catalog;
DROP TABLE credential;
DROP TABLE connection;
ALTER TABLE connection_v2 RENAME TO connection;
ALTER TABLE credential_v2 RENAME TO credential;
ALTER TABLE catalog_v2 RENAME TO catalog;

CREATE TABLE oauth_client_v2 (
    owner              VARCHAR(8)   NOT NULL,
    subject            VARCHAR(255) NOT NULL,
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
    CONSTRAINT pk_oauth_client PRIMARY KEY (owner, subject, slug)
);
INSERT INTO oauth_client_v2 (owner, subject, slug, grant_type, authorization_url, token_url, client_id, client_secret,
        resource, origin_kind, origin_integration, created_at)
    SELECT owner, CASE WHEN owner = 'user' THEN 'local' ELSE '' END, slug, grant_type, authorization_url, token_url,
        client_id, client_secret, resource, origin_kind, origin_integration, created_at
    FROM oauth_client;
DROP TABLE oauth_client;
ALTER TABLE oauth_client_v2 RENAME TO oauth_client;

CREATE TABLE plugin_setting_v2 (
    plugin  VARCHAR(100) NOT NULL,
    owner   VARCHAR(8)   NOT NULL,
    subject VARCHAR(255) NOT NULL,
    name    VARCHAR(200) NOT NULL,
    setting VARCHAR      NOT NULL,
    CONSTRAINT pk_plugin_setting PRIMARY KEY (plugin, owner, subject, name)
);
INSERT INTO plugin_setting_v2 (plugin, owner, subject, name, setting)
    SELECT plugin, owner, CASE WHEN owner = 'user' THEN 'local' ELSE '' END, name, setting FROM plugin_setting;
DROP TABLE plugin_setting;
ALTER TABLE plugin_setting_v2 RENAME TO plugin_setting;

ALTER TABLE policy ADD COLUMN subject VARCHAR(255) DEFAULT '' NOT NULL;
UPDATE policy SET subject = 'local' WHERE owner = 'user';

-- A paused execution's journal is its user's: only that user sees and resumes it, on any replica. Journals an older
-- Tether paused were the daemon's single user's.
ALTER TABLE execution_journal ADD COLUMN subject VARCHAR(255) DEFAULT 'local' NOT NULL;
