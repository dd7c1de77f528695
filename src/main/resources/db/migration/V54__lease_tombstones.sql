-- A reaped replica's row stays as a tombstone until tombstone_until: a docker run client it left may still have its
-- container created after the first removal (the engine gets to it late), so peers keep removing its containers until
-- then. A replica that comes back under the same id writes its row anew, which ends the tombstone.
ALTER TABLE instance_lease ADD COLUMN tombstone_until BIGINT;
