//! The operator's commands on the database, run instead of the server: `partner-api migrate`
//! (the schema brought up to this release's, `migrations`) and `partner-api audit export`
//! (the audit trail since a time, as JSON lines, for a partner's or an auditor's request).
//! Each connects once, as the settings say, and reports one line on failure.

use std::io::Write;

use super::{DatabaseSettings, Failure, Postgres, migrations};

/// Applies the migrations not applied yet, granting `service_role` what the service needs;
/// the versions applied (none when the schema was current).
pub fn migrate(
    settings: &DatabaseSettings,
    service_role: Option<&str>,
) -> Result<Vec<i32>, String> {
    let postgres = Postgres::new(settings)?;
    let role = service_role.map(str::to_owned);
    postgres.with_own_connection(async move |client| {
        migrations::migrate(client, role.as_deref())
            .await
            .map_err(Failure::Database)
    })
}

/// Writes to `out` the audit records from `since` (included) to `until` (excluded), of
/// `partner`'s keys only when given, oldest first, one JSON object a line; how many, and the
/// `until` used. Without one, a minute before the database's own now: a record's time is
/// taken when it is inserted and it is seen once its transaction commits, within the
/// operation's deadline, so an export up to then misses none that a later export from then
/// would not have either.
pub fn export(
    settings: &DatabaseSettings,
    (since, until): (jiff::Timestamp, Option<jiff::Timestamp>),
    partner: Option<&str>,
    out: &mut (dyn Write + Send),
) -> Result<(u64, jiff::Timestamp), String> {
    let postgres = Postgres::new(settings)?;
    let partner = partner.map(str::to_owned);
    postgres.with_own_connection(async move |client| {
        // Read in one snapshot, in pages, so that a long trail neither fills memory nor
        // holds a lock on what replicas append meanwhile.
        let transaction = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let until: jiff::Timestamp = transaction
            .query_one(
                "SELECT coalesce($1::timestamptz, now() - interval '1 minute')",
                &[&until],
            )
            .await?
            .get(0);
        let page = transaction
            .prepare(
                "SELECT sequence, record FROM audit_records \
                 WHERE recorded_at >= $1 AND recorded_at < $2 \
                 AND ($3::text IS NULL OR partner = $3) AND sequence > $4 \
                 ORDER BY sequence LIMIT 1000",
            )
            .await?;
        let (mut after, mut written) = (0i64, 0u64);
        loop {
            let rows = transaction
                .query(&page, &[&since, &until, &partner, &after])
                .await?;
            let Some(last) = rows.last() else {
                break;
            };
            after = last.get(0);
            for row in &rows {
                let record: serde_json::Value = row.get(1);
                let mut line = serde_json::to_vec(&record).expect("a JSON value serializes");
                line.push(b'\n');
                out.write_all(&line)
                    .map_err(|error| Failure::Database(format!("writing the export: {error}")))?;
                written += 1;
            }
        }
        out.flush()
            .map_err(|error| Failure::Database(format!("writing the export: {error}")))?;
        Ok((written, until))
    })
}
