-- A replica told to stop marks its lease draining before anything else: peers stop choosing it as a connection's
-- owner at once, while its still renewed lease keeps them from taking its containers for a dead replica's until it
-- has torn them down itself and removed the row.
ALTER TABLE instance_lease ADD COLUMN draining BOOLEAN DEFAULT FALSE NOT NULL;
