-- A peer that takes on a dead replica's leftovers marks the row instead of deleting it, and deletes it only once the
-- containers are gone: a removal that fails (the engine slow or briefly unreachable) is retried at the next heartbeat,
-- and a claim whose replica died in the middle runs out at claimed_until, so another peer takes it over.
ALTER TABLE instance_lease ADD COLUMN claimed_by VARCHAR(64);
ALTER TABLE instance_lease ADD COLUMN claimed_until BIGINT;
