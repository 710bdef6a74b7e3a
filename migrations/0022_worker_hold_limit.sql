-- What one of a worker's listeners holds unacknowledged at once: its held-bytes limit over its
-- message-size limit (`WorkerConfig::held_messages`), written by each heartbeat. A RabbitMQ
-- listener lowers `prefetchCount` to it, so the scheduler counts one instance of such a
-- trigger as taking no more than the smallest limit a live worker reports
-- (`shoal_domain::binding_kinds::rabbitmq::held_at_once`). Null for a worker that reports none
-- (a version from before this column): the scheduler then takes the target as written.
alter table workers
    add column listener_hold_limit integer check (listener_hold_limit between 1 and 65535);
