//! The schema, versioned: each migration is an SQL file of `migrations/`, compiled into the
//! binary, applied once and in order by `partner-api migrate` (each in a transaction of its
//! own, under an advisory lock, so that two runs at once apply each once), and recorded in
//! `partner_api_migrations`. A replica reads the version at its first member-data operation and
//! refuses them (503) while it is behind [`LATEST`]: deploy the migration first, then the
//! release. A schema ahead of the release (the next release's migration applied first) is
//! served, since migrations only add.

use tokio_postgres::Client;

use super::Failure;

/// The migrations, in order: version, name, SQL.
pub const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "resources",
        include_str!("migrations/0001_resources.sql"),
    ),
    (
        2,
        "audit_records",
        include_str!("migrations/0002_audit_records.sql"),
    ),
    (3, "removals", include_str!("migrations/0003_removals.sql")),
];

/// The version this release needs.
pub const LATEST: i32 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// The advisory lock `migrate` holds (any number, the same in every release).
const LOCK: i64 = 0x0070_6172_746e_6572;

/// The schema's version: 0 before the first migration.
pub async fn version(client: &Client) -> Result<i32, Failure> {
    let exists = client
        .query_one(
            "SELECT to_regclass('partner_api_migrations') IS NOT NULL",
            &[],
        )
        .await?
        .get::<_, bool>(0);
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_one(
            "SELECT coalesce(max(version), 0) FROM partner_api_migrations",
            &[],
        )
        .await?;
    Ok(row.get(0))
}

/// What lets the role connected change or remove audit records, if anything: being a
/// superuser, able to create roles, a member of the table's or its schema's owner (as the
/// session's user too, which a `SET ROLE` could return to), or holding a privilege on the
/// table beyond inserting and reading. The service must connect as the role `migrate
/// --service-role` granted, which may only insert and read.
pub async fn may_change_the_trail(client: &Client) -> Result<Option<String>, Failure> {
    let row = client
        .query_one(
            "WITH trail AS (SELECT c.oid, c.relowner, n.nspowner FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.oid = 'audit_records'::regclass), \
             roles AS (SELECT DISTINCT r.oid, r.rolname, r.rolsuper, r.rolcreaterole \
                 FROM pg_roles r WHERE r.rolname IN (current_user, session_user)) \
             SELECT string_agg(DISTINCT power, ', ') FROM ( \
                 SELECT 'superuser' AS power FROM roles WHERE rolsuper \
                 UNION ALL SELECT 'may create roles' FROM roles WHERE rolcreaterole \
                 UNION ALL SELECT 'owns the trail' FROM roles, trail \
                     WHERE pg_has_role(roles.oid, trail.relowner, 'MEMBER') \
                 UNION ALL SELECT 'owns its schema' FROM roles, trail \
                     WHERE pg_has_role(roles.oid, trail.nspowner, 'MEMBER') \
                 UNION ALL SELECT 'may update, delete, truncate or add triggers' \
                     FROM roles, trail WHERE has_table_privilege(roles.oid, trail.oid, \
                     'UPDATE, DELETE, TRUNCATE, TRIGGER, REFERENCES')) AS powers",
            &[],
        )
        .await?;
    Ok(row.get(0))
}

/// Applies the migrations not applied yet; `service_role`, when given, is granted what the
/// service needs and nothing more. Returns the versions applied.
pub async fn migrate(client: &mut Client, service_role: Option<&str>) -> Result<Vec<i32>, String> {
    let failed = |error: tokio_postgres::Error| match error.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => error.to_string(),
    };
    // Held for the whole run (the session's lock), so that two first runs at once do not
    // race to create the record table either; each migration also takes it in its own
    // transaction.
    client
        .execute("SELECT pg_advisory_lock($1)", &[&LOCK])
        .await
        .map_err(failed)?;
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS partner_api_migrations (
                 version integer PRIMARY KEY,
                 name text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )",
        )
        .await
        .map_err(failed)?;
    let mut applied = Vec::new();
    for (version, name, sql) in MIGRATIONS {
        let transaction = client.transaction().await.map_err(failed)?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])
            .await
            .map_err(failed)?;
        let done = transaction
            .query_opt(
                "SELECT 1 FROM partner_api_migrations WHERE version = $1",
                &[version],
            )
            .await
            .map_err(failed)?
            .is_some();
        if done {
            continue;
        }
        transaction
            .batch_execute(sql)
            .await
            .map_err(|error| format!("migration {version} ({name}): {}", failed(error)))?;
        transaction
            .execute(
                "INSERT INTO partner_api_migrations (version, name) VALUES ($1, $2)",
                &[version, name],
            )
            .await
            .map_err(failed)?;
        transaction.commit().await.map_err(failed)?;
        applied.push(*version);
    }
    if let Some(role) = service_role {
        grant(client, role).await.map_err(failed)?;
    }
    client
        .execute("SELECT pg_advisory_unlock($1)", &[&LOCK])
        .await
        .map_err(failed)?;
    Ok(applied)
}

/// What the service's own role may do: read, write and remove member data (a DELETE
/// operation, audited like a change) and its keys, append to the audit trail and read it
/// (never change or remove a record), and read the migrations' table. UPDATE of one column of
/// the keys only for what locking an expired key before its removal needs (`FOR UPDATE`).
async fn grant(client: &Client, role: &str) -> Result<(), tokio_postgres::Error> {
    let role = quoted(role);
    client
        .batch_execute(&format!(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON resources TO {role};
             GRANT SELECT, INSERT, DELETE, UPDATE (created_at) ON idempotency_keys TO {role};
             REVOKE ALL ON audit_records FROM {role};
             GRANT SELECT, INSERT (partner, record) ON audit_records TO {role};
             GRANT SELECT ON partner_api_migrations TO {role};"
        ))
        .await
}

/// An identifier quoted for SQL.
fn quoted(identifier: &str) -> String {
    format!("\"{}\"", identifier.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_run_from_one_without_gaps() {
        for (index, (version, name, sql)) in MIGRATIONS.iter().enumerate() {
            assert_eq!(*version, index as i32 + 1, "{name}");
            assert!(!sql.trim().is_empty(), "{name}");
        }
        assert_eq!(LATEST, MIGRATIONS.len() as i32);
        assert_eq!(quoted("partner\"api"), "\"partner\"\"api\"");
    }
}
