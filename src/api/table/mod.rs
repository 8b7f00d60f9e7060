//! [`Table`]: the store of one kind of thing that endpoints read and change, shared by every
//! worker (it lives in the endpoints' context, which the app factory builds once), in id order
//! so that lists page through it by id. One interface, two stores behind it, chosen by the
//! settings (`database`): this process's memory (`memory.rs`, the default: lost at a restart,
//! each replica its own), or PostgreSQL (`postgres.rs`, `--database-url`: shared by every
//! replica, kept). Both keep the same contract, which one test suite holds against both
//! (`tests/api/stores.rs`).
//!
//! Every thing belongs to the partner whose key created it and to that key's mode (live, or
//! test for a `pak_test_` key), and a request sees only its own partner's things of its own
//! mode (API1, object-level authorization, by construction): another partner's thing, or a
//! live thing to a test key and the reverse, is answered as missing, with the same 404 as one
//! that does not exist, so ids are not even confirmed. A request without a key creates
//! nothing: a write on a partner's table needs the partner (`ApiError::internal` otherwise,
//! where a shared row would have been visible to every partner). Things seeded with no
//! partner are shared: every request sees them (a catalogue, read without a key), and none
//! changes them. Each read and change also names the members whose data it touched in the
//! request's audit record, so an endpoint on member data needs no code for its trail; in
//! PostgreSQL the record is inserted in the transaction of a change, and committed before a
//! read's answer leaves, so that no member data is served or changed without its record. A create sent with an
//! `Idempotency-Key` is answered once per key (`api::idempotency`); in PostgreSQL the key,
//! the request's digest and the answer are stored in the create's transaction, so that
//! replicas agree.
//!
//! It is also how tests and the example server seed a store:
//! `plans.seed(Some("pt_acme"), [...])`.

mod memory;
mod postgres;

pub use postgres::forget_expired_keys;

use std::borrow::Borrow;
use std::fmt::Display;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::list::{List, ListQuery};
use super::write::{Created, Deleted};
use crate::database::{Database, Postgres};
use crate::edge::context::RequestContext;
use crate::edge::header::IdempotencyKey;
use crate::errors::ApiError;

/// Things of one kind by id, each with the partner it belongs to; see the module documentation.
#[derive(Debug)]
pub struct Table<K, T> {
    /// What the thing is called in a 404's message (`No such plan: ...`), and its rows' kind
    /// in the database.
    kind: &'static str,
    /// The member a thing is data of, for the audit record; `None`: the thing's own id.
    member: Option<fn(&T) -> &str>,
    store: Store<K, T>,
}

#[derive(Debug)]
enum Store<K, T> {
    Memory(memory::Rows<K, T>),
    Postgres(Arc<Postgres>),
}

/// What a thing in a table must be: copied out of the store, and written to and read from
/// the database as JSON (its body as the API answers it).
pub trait Thing: Clone + Serialize + DeserializeOwned + Send + Sync + 'static {}

impl<T: Clone + Serialize + DeserializeOwned + Send + Sync + 'static> Thing for T {}

impl<K: Ord + Borrow<str> + Display, T: Thing> Table<K, T> {
    /// An empty table of things of `kind` (`"plan"`), kept where `database` says.
    pub fn new(kind: &'static str, database: &Database) -> Self {
        let store = match database {
            Database::Memory => Store::Memory(memory::Rows::default()),
            Database::Postgres(postgres) => Store::Postgres(Arc::clone(postgres)),
        };
        Table {
            kind,
            member: None,
            store,
        }
    }

    /// An empty table of things of `kind`, kept where `database` says, each of which is data
    /// of the member `member` names (`|enrolment| enrolment.member.as_str()`): what audit
    /// records name.
    pub fn of_members(kind: &'static str, database: &Database, member: fn(&T) -> &str) -> Self {
        Table {
            member: Some(member),
            ..Table::new(kind, database)
        }
    }

    /// The member `thing`, of id `id`, is data of.
    /// Names, in the request's audit record, the member of the thing a create's kept answer
    /// holds (its body is the thing as created): a replay sends that answer, so its record
    /// names that member, even once the thing has changed or been removed.
    fn audit_member_of_answer<C: ?Sized>(
        &self,
        context: &RequestContext<C>,
        answer: &Created,
    ) -> Result<(), ApiError> {
        let thing: T = serde_json::from_slice(answer.body()).map_err(|_| {
            ApiError::internal(format!(
                "a kept answer of a {} this release cannot read",
                self.kind
            ))
        })?;
        context.audit_members([self.member_of(answer.id(), &thing)]);
        Ok(())
    }

    fn member_of<'a>(&self, id: &'a str, thing: &'a T) -> &'a str {
        match self.member {
            Some(member) => member(thing),
            None => id,
        }
    }

    /// Adds `things` as `partner`'s live things (`None`: shared): how tests and the example
    /// server seed a store. In memory a thing with the same id is replaced; in the database
    /// one already there is kept (a replica started again does not undo what partners
    /// changed). Called before the server runs; a database that cannot take them is an error
    /// naming why.
    pub fn seed(
        &self,
        partner: Option<&str>,
        things: impl IntoIterator<Item = (K, T)>,
    ) -> Result<(), String> {
        self.seed_as(partner, false, things)
    }

    /// Adds `things` as `partner`'s, test things when `test`; see [`Table::seed`].
    pub fn seed_as(
        &self,
        partner: Option<&str>,
        test: bool,
        things: impl IntoIterator<Item = (K, T)>,
    ) -> Result<(), String> {
        match &self.store {
            Store::Memory(rows) => {
                rows.seed(partner, test, things);
                Ok(())
            }
            Store::Postgres(postgres) => {
                postgres::seed(postgres, self.kind, (partner, test), things)
            }
        }
    }

    /// Creates `thing`, with id `id`, as the request's partner's, once per `Idempotency-Key`
    /// (`key`, sent with `body`: `api::idempotency`): `201 Created`, its `Location` the
    /// request's path and the id (`/v1/plans/pl_...`), and the thing. A request without a key
    /// creates nothing (an internal error: the operation should have needed a key); an id
    /// taken already is never overwritten.
    pub async fn create<C: ?Sized, B: Serialize>(
        &self,
        context: &RequestContext<C>,
        (key, body): (&IdempotencyKey, &B),
        id: K,
        thing: T,
    ) -> Result<Created, ApiError> {
        if context.partner().is_none() {
            return Err(ApiError::internal(
                "a write on a partner's table from a request without a key",
            ));
        }
        // The path as the router decoded it, written as a path may be (`%`-encoded where it
        // must be): a header value of ASCII, whatever the client sent.
        let path = crate::edge::view::path_for_log(context.path());
        let created = Created::new(&format!("{path}/{id}"), &thing)?;
        match &self.store {
            Store::Memory(rows) => {
                rows.create(self, context, (key, body), (id, thing), created)
                    .await
            }
            Store::Postgres(postgres) => {
                postgres::create(self, postgres, context, (key, body), (id, thing), created).await
            }
        }
    }

    /// A copy of the thing with `id`, when the request may see it; the 404 otherwise.
    pub async fn get<C: ?Sized>(&self, context: &RequestContext<C>, id: &K) -> Result<T, ApiError> {
        match &self.store {
            Store::Memory(rows) => rows.get(self, context, id.borrow()),
            Store::Postgres(postgres) => postgres::get(self, postgres, context, id.borrow()).await,
        }
    }

    /// Changes the thing with `id` by `change`, which may refuse (a state that does not allow
    /// it: `state_conflict`) and then leaves it as it was; the 404 when it is not the request's
    /// own (another partner's or mode's, or a shared thing, read-only through the API).
    /// `change`'s answer is the request's (the changed thing, usually).
    pub async fn update<C: ?Sized, R>(
        &self,
        context: &RequestContext<C>,
        id: &K,
        change: impl FnOnce(&mut T) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        match &self.store {
            Store::Memory(rows) => rows.update(self, context, id.borrow(), change),
            Store::Postgres(postgres) => {
                postgres::update(self, postgres, context, id.borrow(), change).await
            }
        }
    }

    /// Removes the thing with `id` for good, unless `refuse` refuses (a state that does not
    /// allow it: `state_conflict`, and the thing stays); the 404 when it is not the request's
    /// own, as for a change, and so for a second removal. Audited like a change, in the same
    /// transaction. The answer says what went: `{"object": <kind>, "id": <id>, "deleted": true}`.
    pub async fn remove<C: ?Sized>(
        &self,
        context: &RequestContext<C>,
        id: &K,
        refuse: impl FnOnce(&T) -> Result<(), ApiError>,
    ) -> Result<Deleted, ApiError> {
        match &self.store {
            Store::Memory(rows) => rows.remove(self, context, id.borrow(), refuse)?,
            Store::Postgres(postgres) => {
                postgres::remove(self, postgres, context, id.borrow(), refuse).await?
            }
        }
        Ok(Deleted::new(self.kind, id.borrow()))
    }

    /// The page `query` asks for of the things the request may see, in id order, the ids their
    /// cursors.
    pub async fn page<C: ?Sized>(
        &self,
        context: &RequestContext<C>,
        query: &ListQuery,
    ) -> Result<List<T>, ApiError> {
        match &self.store {
            Store::Memory(rows) => rows.page(self, context, query),
            Store::Postgres(postgres) => postgres::page(self, postgres, context, query).await,
        }
    }
}

/// Removes, every `every`, the `Idempotency-Key`s kept past their 24 hours from the database
/// (`postgres::forget_expired_keys`), for as long as it runs; nothing without a database (the
/// keys in memory are forgotten by the creates themselves). A failure is logged and counted
/// as the database's (`database::Postgres::run`), and tried again next time.
pub async fn forget_expired_keys_every(database: Database, every: std::time::Duration) {
    let Database::Postgres(postgres) = database else {
        return;
    };
    // The first a period after the start, not at once: a replica starting does no more.
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        ticks.tick().await;
        match postgres::forget_expired_keys(&postgres).await {
            Ok(0) | Err(_) => {}
            Ok(forgotten) => log::info!("forgot {forgotten} expired Idempotency-Keys"),
        }
    }
}

/// Who a request reads and changes as: its key's partner and mode, borrowed.
fn asker<C: ?Sized>(context: &RequestContext<C>) -> Option<(&str, bool)> {
    context
        .partner()
        .map(|partner| (partner, context.is_test()))
}
