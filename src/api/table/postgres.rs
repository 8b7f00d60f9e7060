//! A table's things in PostgreSQL (`database`): one row of `resources` per thing, its body the
//! thing as the API answers it, with the partner and mode it belongs to. Every operation is
//! one transaction that also inserts the request's audit record (`audit_records`), so that no
//! member data is read or changed without its record, and a create's `Idempotency-Key`, the
//! request's digest and its answer are stored in the create's own transaction: the same key
//! sent to two replicas at once creates one thing (the other is answered 409
//! `idempotency_key_in_use`, then the first answer once it is committed), and a replica that
//! dies mid-create leaves nothing, or the thing with its key. A database that fails, is slow
//! or is behind the release's schema costs the request a 503 (`database::Postgres::run`).

use std::borrow::Borrow;
use std::fmt::Display;

use deadpool_postgres::Transaction;
use serde::Serialize;

use super::{Table, Thing, asker};
use crate::api::idempotency;
use crate::api::list::{Cursor, List, ListQuery};
use crate::api::write::Created;
use crate::database::{Failure, Postgres};
use crate::edge::context::RequestContext;
use crate::edge::header::IdempotencyKey;
use crate::errors::{ApiError, ErrorCode};

const READ: &str = "SELECT body, partner, test FROM resources WHERE kind = $1 AND id = $2";
const READ_FOR_CHANGE: &str =
    "SELECT body, partner, test FROM resources WHERE kind = $1 AND id = $2 FOR UPDATE";
const CHANGE: &str =
    "UPDATE resources SET body = $3, updated_at = now() WHERE kind = $1 AND id = $2";
const PAGE: &str = "SELECT id, body FROM resources \
                    WHERE kind = $1 AND (partner IS NULL OR (partner = $2 AND test = $3)) \
                    AND id > $4 ORDER BY id LIMIT $5";
const INSERT: &str = "INSERT INTO resources (kind, id, partner, test, body) \
                      VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
const RECORD: &str = "INSERT INTO audit_records (partner, record) VALUES ($1, $2)";
/// The key's lock for the transaction: `false` while another transaction, on any replica,
/// holds it (the same key being answered).
const LOCK_KEY: &str = "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))";
const KEPT_ANSWER: &str = "SELECT request, location, body, \
                           created_at > now() - make_interval(secs => $3) AS fresh \
                           FROM idempotency_keys WHERE scope = $1 AND key = $2";
const FORGET_KEY: &str = "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2";
/// A few expired keys each time, so that no request pays for a day's worth at once.
const FORGET_EXPIRED: &str = "DELETE FROM idempotency_keys WHERE ctid IN \
                              (SELECT ctid FROM idempotency_keys \
                              WHERE created_at < now() - make_interval(secs => $1) LIMIT 16)";
const KEEP_ANSWER: &str = "INSERT INTO idempotency_keys (scope, key, request, location, body) \
                           VALUES ($1, $2, $3, $4, $5)";

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

/// Inserts the request's audit record, answered as `answer` says (`success` when it
/// succeeds).
async fn record<C: ?Sized, R>(
    transaction: &Transaction<'_>,
    context: &RequestContext<C>,
    answer: &Result<R, ApiError>,
    success: u16,
) -> Result<(), Failure> {
    let (status, code) = match answer {
        Ok(_) => (success, None),
        Err(error) => (error.status().as_u16(), Some(error.code().as_str())),
    };
    if let Some(record) = context.audit_record(status, code) {
        let statement = transaction.prepare_cached(RECORD).await?;
        transaction
            .execute(&statement, &[&context.partner(), &record])
            .await?;
    }
    Ok(())
}

/// A thing read back from its body.
fn thing_of<T: Thing>(kind: &str, body: serde_json::Value) -> Result<T, Failure> {
    serde_json::from_value(body).map_err(|error| {
        Failure::Answer(ApiError::internal(format!(
            "a stored {kind} does not read back: {error}"
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
            let transaction = client.transaction().await?;
            let statement = transaction.prepare_cached(READ).await?;
            let row = transaction
                .query_opt(&statement, &[&table.kind, &id])
                .await?;
            let answer = match row {
                Some(row) if owned_by(row.get(1), row.get(2), asker(context)).1 => {
                    let thing: T = thing_of(table.kind, row.get(0))?;
                    context.audit_members([table.member_of(id, &thing)]);
                    Ok(thing)
                }
                _ => Err(context.no_such(table.kind, id)),
            };
            record(&transaction, context, &answer, 200).await?;
            transaction.commit().await?;
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
    let (partner, test) = match asker(context) {
        Some((partner, test)) => (Some(partner), test),
        None => (None, false),
    };
    let after = query
        .starting_after
        .as_ref()
        .map_or("", |cursor| cursor.as_str());
    // One more than the page, to know whether there is more.
    let limit = i64::try_from(query.limit.get() + 1).unwrap_or(i64::MAX);
    let answer = postgres
        .run("a list", async |client| {
            let transaction = client.transaction().await?;
            let statement = transaction.prepare_cached(PAGE).await?;
            let rows = transaction
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
            record(&transaction, context, &answer, 200).await?;
            transaction.commit().await?;
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
            let statement = transaction.prepare_cached(READ_FOR_CHANGE).await?;
            let row = transaction
                .query_opt(&statement, &[&table.kind, &id])
                .await?;
            let answer = match row {
                Some(row) if owned_by(row.get(1), row.get(2), asker(context)).0 => {
                    let mut thing: T = thing_of(table.kind, row.get(0))?;
                    context.audit_members([table.member_of(id, &thing)]);
                    match change(&mut thing) {
                        Ok(answer) => {
                            let body = serde_json::to_value(&thing).map_err(|error| {
                                ApiError::internal(format!("a changed thing: {error}"))
                            })?;
                            let statement = transaction.prepare_cached(CHANGE).await?;
                            transaction
                                .execute(&statement, &[&table.kind, &id, &body])
                                .await?;
                            Ok(answer)
                        }
                        Err(refused) => Err(refused),
                    }
                }
                _ => Err(context.no_such(table.kind, id)),
            };
            record(&transaction, context, &answer, 200).await?;
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
        Some(key) => Some((
            idempotency::whose(context),
            key.as_str(),
            idempotency::fingerprint(context, body)?.to_vec(),
        )),
        None => None,
    };
    let kept_for = idempotency::KEPT_FOR.as_secs_f64();
    let body_json = serde_json::to_value(&thing)
        .map_err(|error| ApiError::internal(format!("a created thing: {error}")))?;
    postgres
        .run("a create", async |client| {
            let transaction = client.transaction().await?;
            if let Some((scope, key, request)) = &keyed {
                let lock = transaction.prepare_cached(LOCK_KEY).await?;
                let locked: bool = transaction
                    .query_one(&lock, &[&format!("{scope}\n{key}")])
                    .await?
                    .get(0);
                if !locked {
                    return Err(ApiError::new(ErrorCode::IdempotencyKeyInUse).into());
                }
                let forget = transaction.prepare_cached(FORGET_EXPIRED).await?;
                transaction.execute(&forget, &[&kept_for]).await?;
                let kept = transaction.prepare_cached(KEPT_ANSWER).await?;
                if let Some(row) = transaction
                    .query_opt(&kept, &[scope, key, &kept_for])
                    .await?
                {
                    let fresh: bool = row.get(3);
                    if !fresh {
                        let forget = transaction.prepare_cached(FORGET_KEY).await?;
                        transaction.execute(&forget, &[scope, key]).await?;
                    } else if row.get::<_, &[u8]>(0) != request.as_slice() {
                        return Err(ApiError::new(ErrorCode::IdempotencyKeyReused).into());
                    } else {
                        // The first answer again, recorded as a read of what it created.
                        let answer = Created::from_parts(row.get(1), row.get::<_, Vec<u8>>(2))?;
                        let read = transaction.prepare_cached(READ).await?;
                        if let Some(row) = transaction
                            .query_opt(&read, &[&table.kind, &answer.id()])
                            .await?
                        {
                            let thing: T = thing_of(table.kind, row.get(0))?;
                            context.audit_members([table.member_of(answer.id(), &thing)]);
                        }
                        let answer = Ok(answer);
                        record(&transaction, context, &answer, 201).await?;
                        transaction.commit().await?;
                        return Ok(answer);
                    }
                }
            }
            let insert = transaction.prepare_cached(INSERT).await?;
            let inserted = transaction
                .execute(
                    &insert,
                    &[&table.kind, &id.borrow(), &partner, &test, &body_json],
                )
                .await?;
            // A new id is drawn at random; one taken already is never overwritten.
            if inserted != 1 {
                return Err(ApiError::internal(format!(
                    "a create drew the id {id}, which is taken"
                ))
                .into());
            }
            context.audit_members([table.member_of(id.borrow(), &thing)]);
            if let Some((scope, key, request)) = &keyed {
                let keep = transaction.prepare_cached(KEEP_ANSWER).await?;
                transaction
                    .execute(
                        &keep,
                        &[scope, key, request, &created.location(), &created.body()],
                    )
                    .await?;
            }
            let answer = Ok(created.clone());
            record(&transaction, context, &answer, 201).await?;
            transaction.commit().await?;
            Ok(answer)
        })
        .await?
}
