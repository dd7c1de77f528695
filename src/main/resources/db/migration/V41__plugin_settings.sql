-- A plugin's own settings (Executor's plugin blobs: the 1Password binding, ...), one JSON value per plugin, owner
-- and name. The value is sealed whole: a setting may hold a token.
CREATE TABLE plugin_setting (
    plugin VARCHAR(100) NOT NULL,
    owner  VARCHAR(8)   NOT NULL,
    name   VARCHAR(200) NOT NULL,
    setting VARCHAR      NOT NULL,
    PRIMARY KEY (plugin, owner, name)
);
