//! A table's things in PostgreSQL (`database`): one row of `resources` per thing, its body the
//! thing as the API answers it, with the partner and mode it belongs to. A change is one
//! transaction that also inserts the request's audit record (`audit_records`); a read is one
//! statement, its record committed before the answer leaves; so no member data is read or
//! changed without its record. The statements of a transaction that do not wait on each
//! other's answers are sent together (pipelined: the server runs them in order), so a create
//! costs four round trips, not seven. A create's `Idempotency-Key`, the
//! request's digest and its answer are stored in the create's own transaction: the same key
//! sent to two replicas at once creates one thing (the other is answered 409
//! `idempotency_key_in_use`, then the first answer once it is committed), and a replica that
//! dies mid-create leaves nothing, or the thing with its key. A database that fails, is slow
//! or is behind the release's schema costs the request a 503 (`database::Postgres::run`).

use std::borrow::Borrow;
use std::fmt::Display;

use deadpool_postgres::GenericClient;
use serde::Serialize;
use tokio_postgres::types::ToSql;

use super::{Table, Thing, asker};
use crate::api::idempotency;
use crate::api::list::{Cursor, List, ListQuery};
use crate::api::write::Created;
use crate::database::{Failure, Postgres};
use crate::edge::context::RequestContext;
use crate::edge::header::IdempotencyKey;
use crate::errors::{ApiError, ErrorCode};

/// The thing, when the asker (`$3`, `$4`) may see it: its own or a shared one. The owner is
/// checked here and again where it is read.
const READ: &str = "SELECT body, partner, test FROM resources WHERE kind = $1 AND id = $2 \
                    AND (partner IS NULL OR (partner = $3 AND test = $4))";
/// The thing, locked for the change, when it is the asker's own: another's is never locked.
const READ_FOR_CHANGE: &str = "SELECT body, partner, test FROM resources \
                               WHERE kind = $1 AND id = $2 AND partner = $3 AND test = $4 \
                               FOR UPDATE";
const CHANGE: &str =
    "UPDATE resources SET body = $3, updated_at = now() WHERE kind = $1 AND id = $2";
const REMOVE: &str = "DELETE FROM resources \
                      WHERE kind = $1 AND id = $2 AND partner = $3 AND test = $4";
const PAGE: &str = "SELECT id, body FROM resources \
                    WHERE kind = $1 AND (partner IS NULL OR (partner = $2 AND test = $3)) \
                    AND id > $4 ORDER BY id LIMIT $5";
const INSERT: &str = "INSERT INTO resources (kind, id, partner, test, body) \
                      VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
const RECORD: &str = "INSERT INTO audit_records (partner, record) VALUES ($1, $2)";
/// The key's lock for the transaction: `false` while another transaction, on any replica,
/// holds it (the same key being answered).
const LOCK_KEY: &str = "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))";
/// How long a key is kept ([`idempotency::KEPT_FOR`]), written into the statements that
/// read it: a parameter would let the server plan the expired keys' clean-up once for any
/// age, by scanning the whole table, for every create.
macro_rules! kept_for {
    () => {
        "interval '86400 seconds'"
    };
}
const KEPT_ANSWER: &str = concat!(
    "SELECT request, location, body, created_at > now() - ",
    kept_for!(),
    " AS fresh FROM idempotency_keys WHERE scope = $1 AND key = $2"
);
const FORGET_KEY: &str = "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2";
/// Up to a batch of expired keys, the oldest first; rows another replica is removing are
/// skipped, never waited for.
const FORGET_EXPIRED: &str = concat!(
    "DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys ",
    "WHERE created_at < now() - ",
    kept_for!(),
    " ORDER BY created_at LIMIT 1000 FOR UPDATE SKIP LOCKED)"
);
const KEEP_ANSWER: &str = "INSERT INTO idempotency_keys (scope, key, request, location, body) \
                           VALUES ($1, $2, $3, $4, $5)";

/// Removes the `Idempotency-Key`s kept longer than [`idempotency::KEPT_FOR`], a batch at a
/// time (at most a hundred batches a call); how many. Run by each replica once a minute
/// (`forget_expired_keys_every`), not by the creates: a clean-up in every create's
/// transaction cost each create more than the rest of its statements together, and kept
/// nothing expired from lingering once creates stopped.
pub async fn forget_expired_keys(postgres: &Postgres) -> Result<u64, ApiError> {
    let mut forgotten = 0;
    for _ in 0..100 {
        let batch = postgres
            .run("the expired keys' clean-up", async |client| {
                let statement = client.prepare_cached(FORGET_EXPIRED).await?;
                Ok(client.execute(&statement, &[]).await?)
            })
            .await?;
        forgotten += batch;
        if batch < 1000 {
            break;
        }
    }
    Ok(forgotten)
}

/// Inserts `things` as `partner`'s (of mode `test`), keeping any already there.
pub(super) fn seed<K: Borrow<str>, T: Thing>(
    postgres: &Postgres,
    kind: &str,
    (partner, test): (Option<&str>, bool),
    things: impl IntoIterator<Item = (K, T)>,
) -> Result<(), String> {
    let rows = things
        .into_iter()
        .map(|(id, thing)| {
            serde_json::to_value(&thing)
                .map(|body| (id.borrow().to_owned(), body))
                .map_err(|error| format!("a seeded {kind} does not serialize: {error}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if rows.is_empty() {
        return Ok(());
    }
    let (kind, partner) = (kind.to_owned(), partner.map(str::to_owned));
    postgres.with_own_connection(async move |client| {
        let statement = client.prepare(INSERT).await?;
        for (id, body) in &rows {
            client
                .execute(&statement, &[&kind, id, &partner, &test, body])
                .await?;
        }
        Ok(())
    })
}

/// The request's audit record, answered as `answer` says (`success` when it succeeds).
fn record_of<C: ?Sized, R>(
    context: &RequestContext<C>,
    answer: &Result<R, ApiError>,
    success: u16,
) -> Result<Option<serde_json::Value>, ApiError> {
    let (status, code) = match answer {
        Ok(_) => (success, None),
        Err(error) => (error.status().as_u16(), Some(error.code().as_str())),
    };
    context.audit_record(status, code)
}

/// Inserts `record` (when the request is audited), in the transaction of the read or change
/// when `client` is one, else committed on its own before the answer leaves.
async fn insert_record<G: GenericClient, C: ?Sized>(
    client: &G,
    context: &RequestContext<C>,
    record: Option<serde_json::Value>,
) -> Result<(), Failure> {
    if let Some(record) = record {
        let statement = client.prepare_cached(RECORD).await?;
        let inserted = client
            .execute(&statement, &[&context.partner(), &record])
            .await?;
        // A trigger that swallowed it would leave the data served without its record.
        if inserted != 1 {
            return Err(Failure::Refused(format!(
                "an audit record was not inserted ({inserted} rows)"
            )));
        }
    }
    Ok(())
}

/// The asker's partner (`None` without a key) and mode, as the statements take them.
fn asked<C: ?Sized>(context: &RequestContext<C>) -> (Option<&str>, bool) {
    match asker(context) {
        Some((partner, test)) => (Some(partner), test),
        None => (None, false),
    }
}

/// A thing read back from its body. A body this release cannot read is an internal error
/// whose cause names the kind of fault only: serde's own message would quote the stored
/// value, member data, into the log.
fn thing_of<T: Thing>(kind: &str, body: serde_json::Value) -> Result<T, Failure> {
    serde_json::from_value(body).map_err(|error| {
        Failure::Answer(ApiError::internal(format!(
            "a stored {kind} does not read back as this release's type ({:?} error)",
            error.classify()
        )))
    })
}

/// Whether a row of `partner` and mode `test` is the asker's (`mine`) or at least visible.
fn owned_by(partner: Option<&str>, test: bool, asker: Option<(&str, bool)>) -> (bool, bool) {
    match partner {
        None => (false, true),
        Some(partner) => {
            let mine = asker.is_some_and(|(asker, mode)| asker == partner && mode == test);
            (mine, mine)
        }
    }
}

pub(super) async fn get<K: Ord + Borrow<str> + Display, T: Thing, C: ?Sized>(
    table: &Table<K, T>,
    postgres: &Postgres,
    context: &RequestContext<C>,
    id: &str,
) -> Result<T, ApiError> {
    postgres
        .run("a read", async |client| {
            // One statement, then its record committed before the answer leaves: no
            // transaction is needed to serve nothing without a record.
            let client = &*client;
            let (partner, test) = asked(context);
            let statement = client.prepare_cached(READ).await?;
            let row = client
                .query_opt(&statement, &[&table.kind, &id, &partner, &test])
                .await?;
            let answer = match row {
                Some(row) if owned_by(row.get(1), row.get(2), asker(context)).1 => {
                    let thing: T = thing_of(table.kind, row.get(0))?;
                    context.audit_members([table.member_of(id, &thing)]);
                    Ok(thing)
                }
                _ => Err(context.no_such(table.kind, id)),
            };
            insert_record(client, context, record_of(context, &answer, 200)?).await?;
            Ok(answer)
        })
        .await?
}

pub(super) async fn page<K: Ord + Borrow<str> + Display, T: Thing, C: ?Sized>(
    table: &Table<K, T>,
    postgres: &Postgres,
    context: &RequestContext<C>,
    query: &ListQuery,
) -> Result<List<T>, ApiError> {
    let (partner, test) = asked(context);
    let after = query
        .starting_after
        .as_ref()
        .map_or("", |cursor| cursor.as_str());
    // One more than the page, to know whether there is more.
    let limit = i64::try_from(query.limit.get() + 1).unwrap_or(i64::MAX);
    let answer = postgres
        .run("a list", async |client| {
            // As a read: one statement, then its record.
            let client = &*client;
            let statement = client.prepare_cached(PAGE).await?;
            let rows = client
                .query(&statement, &[&table.kind, &partner, &test, &after, &limit])
                .await?;
            let mut things = Vec::with_capacity(rows.len());
            for row in rows {
                let id: String = row.get(0);
                things.push((id, thing_of::<T>(table.kind, row.get(1))?));
            }
            let answer = List::page(things, query.limit, |(id, _)| Cursor::new(id));
            if let Ok(page) = &answer {
                context.audit_members(
                    page.data()
                        .iter()
                        .map(|(id, thing)| table.member_of(id, thing)),
                );
            }
            insert_record(client, context, record_of(context, &answer, 200)?).await?;
            Ok(answer)
        })
        .await?;
    answer.map(|page| page.map(|(_, thing)| thing))
}

pub(super) async fn update<K: Ord + Borrow<str> + Display, T: Thing, C: ?Sized, R>(
    table: &Table<K, T>,
    postgres: &Postgres,
    context: &RequestContext<C>,
    id: &str,
    change: impl FnOnce(&mut T) -> Result<R, ApiError>,
) -> Result<R, ApiError> {
    postgres
        .run("a change", async |client| {
            let transaction = client.transaction().await?;
            let (answer, changed) = match own_thing_locked(&transaction, table, context, id).await?
            {
                Some(mut thing) => match change(&mut thing) {
                    Ok(answer) => {
                        let body = serde_json::to_value(&thing).map_err(|error| {
                            ApiError::internal(format!("a changed thing: {error}"))
                        })?;
                        (Ok(answer), Some(body))
                    }
                    Err(refused) => (Err(refused), None),
                },
                None => (Err(context.no_such(table.kind, id)), None),
            };
            let record = record_of(context, &answer, 200)?;
            match changed {
                // The change and its record sent together, in the transaction.
                Some(body) => {
                    let statement = transaction.prepare_cached(CHANGE).await?;
                    let change = async {
                        transaction
                            .execute(&statement, &[&table.kind, &id, &body])
                            .await
                            .map_err(Failure::from)
                    };
                    futures_util::try_join!(change, insert_record(&transaction, context, record))?;
                }
                None => insert_record(&transaction, context, record).await?,
            }
            transaction.commit().await?;
            Ok(answer)
        })
        .await?
}

/// The thing with `id`, locked for the transaction's change, when the request may change it
/// (its own partner's and mode's), its member named in the request's audit record; `None`
/// otherwise (the caller answers the 404).
async fn own_thing_locked<K: Ord + Borrow<str> + Display, T: Thing, C: ?Sized>(
    transaction: &impl GenericClient,
    table: &Table<K, T>,
    context: &RequestContext<C>,
    id: &str,
) -> Result<Option<T>, Failure> {
    let (partner, test) = asked(context);
    let statement = transaction.prepare_cached(READ_FOR_CHANGE).await?;
    let row = transaction
        .query_opt(&statement, &[&table.kind, &id, &partner, &test])
        .await?;
    match row {
        Some(row) if owned_by(row.get(1), row.get(2), asker(context)).0 => {
            let thing: T = thing_of(table.kind, row.get(0))?;
            context.audit_members([table.member_of(id, &thing)]);
            Ok(Some(thing))
        }
        _ => Ok(None),
    }
}

pub(super) async fn remove<K: Ord + Borrow<str> + Display, T: Thing, C: ?Sized>(
    table: &Table<K, T>,
    postgres: &Postgres,
    context: &RequestContext<C>,
    id: &str,
    refuse: impl FnOnce(&T) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    postgres
        .run("a removal", async |client| {
            let transaction = client.transaction().await?;
            let answer = match own_thing_locked(&transaction, table, context, id).await? {
                Some(thing) => refuse(&thing),
                None => Err(context.no_such(table.kind, id)),
            };
            let (partner, test) = asked(context);
            let record = record_of(context, &answer, 200)?;
            if answer.is_ok() {
                // The removal and its record sent together, in the transaction.
                let statement = transaction.prepare_cached(REMOVE).await?;
                let removal = async {
                    let removed = transaction
                        .execute(&statement, &[&table.kind, &id, &partner, &test])
                        .await?;
                    // The row was locked as the asker's above; a policy or trigger that kept
                    // it would leave a removal answered and audited that never happened.
                    if removed != 1 {
                        return Err(Failure::Refused(format!(
                            "a removal removed {removed} rows"
                        )));
                    }
                    Ok(())
                };
                futures_util::try_join!(removal, insert_record(&transaction, context, record))?;
            } else {
                insert_record(&transaction, context, record).await?;
            }
            transaction.commit().await?;
            Ok(answer)
        })
        .await?
}

pub(super) async fn create<K: Ord + Borrow<str> + Display, T: Thing, C: ?Sized, B: Serialize>(
    table: &Table<K, T>,
    postgres: &Postgres,
    context: &RequestContext<C>,
    (key, body): (&IdempotencyKey, &B),
    (id, thing): (K, T),
    created: Created,
) -> Result<Created, ApiError> {
    let (partner, test) = asker(context).ok_or_else(|| {
        ApiError::internal("a write on a partner's table from a request without a key")
    })?;
    let keyed = match &key.0 {
        // Each table's keys apart, as in memory.
        Some(key) => Some((
            format!("{} {}", idempotency::whose(context), table.kind),
            key.as_str(),
            idempotency::fingerprint(context, body)?.to_vec(),
        )),
        None => None,
    };
    let body_json = serde_json::to_value(&thing)
        .map_err(|error| ApiError::internal(format!("a created thing: {error}")))?;
    postgres
        .run("a create", async |client| {
            // Read committed, whatever the database's default: the key's row is looked for
            // after its lock is taken, so a create another replica committed meanwhile is
            // seen and replayed.
            let transaction = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::ReadCommitted)
                .start()
                .await?;
            if let Some((scope, key, request)) = &keyed {
                let lock = transaction.prepare_cached(LOCK_KEY).await?;
                let kept = transaction.prepare_cached(KEPT_ANSWER).await?;
                let lock_name = format!("{scope}\n{key}");
                // Sent together: the server runs them in order, so the key is looked for
                // once its lock is held (and the answer ignored when the lock is not).
                let lock_params: [&(dyn ToSql + Sync); 1] = [&lock_name];
                let kept_params: [&(dyn ToSql + Sync); 2] = [scope, key];
                let (locked, found) = futures_util::try_join!(
                    transaction.query_one(&lock, &lock_params),
                    transaction.query_opt(&kept, &kept_params),
                )?;
                if !locked.get::<_, bool>(0) {
                    return Err(ApiError::new(ErrorCode::IdempotencyKeyInUse).into());
                }
                if let Some(row) = found {
                    let fresh: bool = row.get(3);
                    if !fresh {
                        let forget = transaction.prepare_cached(FORGET_KEY).await?;
                        transaction.execute(&forget, &[scope, key]).await?;
                    } else if row.get::<_, &[u8]>(0) != request.as_slice() {
                        return Err(ApiError::new(ErrorCode::IdempotencyKeyReused).into());
                    } else {
                        // The first answer again, recorded as what it is: member data sent
                        // again, naming the member it holds (the thing may have changed or
                        // gone since).
                        let answer = Created::from_parts(row.get(1), row.get::<_, Vec<u8>>(2))?;
                        table.audit_member_of_answer(context, &answer)?;
                        let answer = Ok(answer);
                        let record = record_of(context, &answer, 201)?;
                        insert_record(&transaction, context, record).await?;
                        transaction.commit().await?;
                        return Ok(answer);
                    }
                }
            }
            let insert = transaction.prepare_cached(INSERT).await?;
            let keep = transaction.prepare_cached(KEEP_ANSWER).await?;
            context.audit_members([table.member_of(id.borrow(), &thing)]);
            let answer = Ok(created.clone());
            let record = record_of(context, &answer, 201)?;
            let id_text: &str = id.borrow();
            let insert_thing = async {
                let params: [&(dyn ToSql + Sync); 5] =
                    [&table.kind, &id_text, &partner, &test, &body_json];
                transaction
                    .execute(&insert, &params)
                    .await
                    .map_err(Failure::from)
            };
            let keep_answer = async {
                let Some((scope, key, request)) = &keyed else {
                    return Ok(());
                };
                let location = created.location();
                let body = created.body();
                match transaction
                    .execute(&keep, &[scope, key, request, &location, &body])
                    .await
                {
                    Ok(_) => Ok(()),
                    // Kept by another create meanwhile (where the lock did not hold it off):
                    // the same answer as a key being answered.
                    Err(error)
                        if error.code()
                            == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) =>
                    {
                        Err(ApiError::new(ErrorCode::IdempotencyKeyInUse).into())
                    }
                    Err(error) => Err(Failure::from(error)),
                }
            };
            // The thing, its key and answer, and the record, sent together.
            let (inserted, (), ()) = futures_util::try_join!(
                insert_thing,
                keep_answer,
                insert_record(&transaction, context, record)
            )?;
            // A new id is drawn at random; one taken already is never overwritten.
            if inserted != 1 {
                return Err(ApiError::internal(format!(
                    "a create drew the id {id}, which is taken"
                ))
                .into());
            }
            transaction.commit().await?;
            Ok(answer)
        })
        .await?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statements_keep_a_key_as_long_as_the_idempotency_rules_say() {
        assert_eq!(
            kept_for!(),
            format!("interval '{} seconds'", idempotency::KEPT_FOR.as_secs())
        );
        for statement in [KEPT_ANSWER, FORGET_EXPIRED] {
            assert!(statement.contains(kept_for!()), "{statement}");
        }
    }
}
