-- Member data may be removed (partner-api migrate, version 3): a DELETE operation removes a
-- thing, audited in the same transaction as a change. The statement is the table's own note;
-- what the version marks is the grant: `migrate --service-role` now gives the service's role
-- DELETE on resources, and a replica of this release answers member data only once the
-- database says it has been run (a replica whose role lacked the grant would otherwise fail
-- every removal).
COMMENT ON TABLE resources IS
    'Member data, one row per thing (partner-api api::table): read, created, changed and removed by the service''s role, each audited in its transaction.';
