/**
 * The schema, one migration per version, applied in order and each once (flagops_schema_migrations). A released
 * migration never changes: a change to the schema is a new one at the end.
 *
 * Records are kept as JSON beside the columns the database must check (ids, unique usernames, counts it adds
 * up); `position` keeps the order records were added in, which lists hand out (oldest first).
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE flagops_organisations (
    name text PRIMARY KEY,
    created_at text NOT NULL,
    position bigserial NOT NULL
  );
  CREATE TABLE flagops_keys (
    id text PRIMARY KEY,
    org text NOT NULL,
    record jsonb NOT NULL,
    position bigserial NOT NULL
  );
  CREATE TABLE flagops_secrets (
    name text PRIMARY KEY,
    value bytea NOT NULL
  );
  CREATE TABLE flagops_users (
    id text PRIMARY KEY,
    org text NOT NULL,
    username_key text NOT NULL UNIQUE,
    record jsonb NOT NULL,
    position bigserial NOT NULL
  );
  CREATE TABLE flagops_sessions (
    id text PRIMARY KEY,
    record jsonb NOT NULL,
    position bigserial NOT NULL
  );
  CREATE TABLE flagops_triggers (
    id text PRIMARY KEY,
    org text NOT NULL,
    record jsonb NOT NULL,
    position bigserial NOT NULL
  );
  CREATE TABLE flagops_webhooks (
    id text PRIMARY KEY,
    org text NOT NULL,
    record jsonb NOT NULL,
    position bigserial NOT NULL
  );
  CREATE TABLE flagops_webhook_cursors (
    org text PRIMARY KEY,
    cursor text NOT NULL
  );
  CREATE TABLE flagops_deliveries (
    id text PRIMARY KEY,
    webhook_id text NOT NULL,
    record jsonb NOT NULL,
    position bigserial NOT NULL,
    leased_until timestamptz
  );
  CREATE INDEX flagops_deliveries_webhook ON flagops_deliveries (webhook_id);
  CREATE TABLE flagops_counts (
    hour bigint NOT NULL,
    scope text NOT NULL,
    flag_key text NOT NULL,
    variation text NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (hour, scope, flag_key, variation)
  );
  CREATE TABLE flagops_replica_batches (
    org text NOT NULL,
    batch_id text NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org, batch_id)
  );
  CREATE TABLE flagops_pushes (
    position bigserial PRIMARY KEY,
    org text NOT NULL,
    record jsonb NOT NULL
  );
  CREATE INDEX flagops_pushes_org ON flagops_pushes (org, position);
  CREATE TABLE flagops_unsigned_trailers (
    org text PRIMARY KEY,
    up_to text
  );
  `,
  `
  CREATE TABLE flagops_held_kills (
    id text NOT NULL,
    org text NOT NULL,
    record jsonb NOT NULL,
    position bigserial NOT NULL,
    PRIMARY KEY (org, id)
  );
  `,
  `
  CREATE TABLE flagops_guard_claims (
    org text NOT NULL,
    id text NOT NULL,
    held_until bigint NOT NULL,
    PRIMARY KEY (org, id)
  );
  CREATE TABLE flagops_guard_checks (
    org text NOT NULL,
    target text NOT NULL,
    record jsonb NOT NULL,
    PRIMARY KEY (org, target)
  );
  `,
  `
  CREATE TABLE flagops_turn_notes (
    name text PRIMARY KEY,
    note text NOT NULL
  );
  `,
  `
  CREATE TABLE flagops_pepper_checks (
    hashes text PRIMARY KEY,
    value text NOT NULL
  );
  `,
];
