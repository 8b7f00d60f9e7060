-- The audit trail of member data (partner-api migrate, version 2): one row for every read and
-- change of member data, inserted in the transaction that reads or changes it, so that no
-- member data is served or changed without its record. Append-only: the service's role may
-- only insert and read (partner-api migrate grants no more), and a trigger refuses an UPDATE,
-- a DELETE or a TRUNCATE whoever runs it, so that removing a record takes an owner dropping
-- the trigger first, itself a change that leaves a trace in the server's log.
CREATE TABLE audit_records (
    sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    partner text,
    record jsonb NOT NULL
);
CREATE INDEX audit_records_by_time ON audit_records (recorded_at);

CREATE FUNCTION audit_records_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_records is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_records_append_only BEFORE UPDATE OR DELETE ON audit_records
    FOR EACH ROW EXECUTE FUNCTION audit_records_refuse_change();
CREATE TRIGGER audit_records_never_truncated BEFORE TRUNCATE ON audit_records
    FOR EACH STATEMENT EXECUTE FUNCTION audit_records_refuse_change();
