//! [`Table`]: the in-memory store of one kind of thing that endpoints read and change, shared
//! by every worker (it lives in `ApiContext`, which the app factory builds once), in id order
//! so that lists page through it by id. Until a database is agreed it is where a resource keeps
//! its things; it is also how tests seed a store: `app.api.plans.seed(Some("pt_acme"), [...])`.
//!
//! Every thing belongs to the partner whose key created it and to that key's mode (live, or
//! test for a `pak_test_` key), and a request sees only its own partner's things of its own
//! mode (API1, object-level authorization, by construction): another partner's thing, or a
//! live thing to a test key and the reverse, is answered as missing, with the same 404 as one
//! that does not exist, so ids are not even confirmed. A request without a key creates
//! nothing: a write on a partner's table needs the partner (`ApiError::internal` otherwise,
//! where a shared row would have been visible to every partner). Things seeded with no
//! partner are shared: every request sees them (a catalogue, read without a key), and none
//! changes them. Each read and change also names the members whose data it touched in
//! the request's audit record, so an endpoint on member data needs no code for its trail.
//! Every read and change holds the lock only for the copy or the change itself, never across an
//! `.await`, and a panic while it was held does not make it unusable.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::ops::Bound;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde::Serialize;

use super::idempotency::Replays;
use super::list::{Cursor, List, ListQuery};
use super::write::Created;
use crate::edge::context::RequestContext;
use crate::edge::header::IdempotencyKey;
use crate::errors::ApiError;

/// Things of one kind by id, each with the partner it belongs to; see the module documentation.
#[derive(Debug)]
pub struct Table<K, T> {
    /// What the thing is called in a 404's message (`No such plan: ...`).
    kind: &'static str,
    /// The member a thing is data of, for the audit record; `None`: the thing's own id.
    member: Option<fn(&T) -> &str>,
    rows: RwLock<BTreeMap<K, Row<T>>>,
    /// The `Idempotency-Key`s of the creates of its things.
    replays: Replays,
}

#[derive(Debug)]
struct Row<T> {
    /// Whose it is; `None` for a shared thing.
    owner: Option<Owner>,
    thing: T,
}

/// The partner a thing belongs to, and its mode.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Owner {
    partner: Box<str>,
    /// Written with a test key: seen by its partner's test keys only.
    test: bool,
}

impl Owner {
    /// The owner of what the request writes: its key's partner and mode.
    fn of<C: ?Sized>(context: &RequestContext<C>) -> Option<Owner> {
        asker(context).map(|(partner, test)| Owner {
            partner: Box::from(partner),
            test,
        })
    }

    fn is(&self, (partner, test): (&str, bool)) -> bool {
        *self.partner == *partner && self.test == test
    }
}

/// Who a request reads and changes as: its key's partner and mode, borrowed.
fn asker<C: ?Sized>(context: &RequestContext<C>) -> Option<(&str, bool)> {
    context
        .partner()
        .map(|partner| (partner, context.is_test()))
}

impl<T> Row<T> {
    /// Whether a request asking as `asker` may read it: its own, or a shared one.
    fn visible_to(&self, asker: Option<(&str, bool)>) -> bool {
        match &self.owner {
            None => true,
            Some(owner) => asker.is_some_and(|asker| owner.is(asker)),
        }
    }

    /// Whether a request asking as `asker` may change it: its own only (a shared thing is
    /// read-only through the API, so no key, a test one least of all, changes what every
    /// partner sees).
    fn changeable_by(&self, asker: Option<(&str, bool)>) -> bool {
        self.owner
            .as_ref()
            .is_some_and(|owner| asker.is_some_and(|asker| owner.is(asker)))
    }
}

impl<K: Ord + Borrow<str> + Display, T: Clone> Table<K, T> {
    /// An empty table of things of `kind` (`"plan"`).
    pub fn new(kind: &'static str) -> Self {
        Table {
            kind,
            member: None,
            rows: RwLock::new(BTreeMap::new()),
            replays: Replays::default(),
        }
    }

    /// An empty table of things of `kind` each of which is data of the member `member` names
    /// (`|enrolment| enrolment.member.as_str()`): what audit records name.
    pub fn of_members(kind: &'static str, member: fn(&T) -> &str) -> Self {
        Table {
            member: Some(member),
            ..Table::new(kind)
        }
    }

    /// The member `thing`, of id `id`, is data of.
    fn member_of<'a>(&self, id: &'a str, thing: &'a T) -> &'a str {
        match self.member {
            Some(member) => member(thing),
            None => id,
        }
    }

    /// Adds `things` as `partner`'s live things (`None`: shared), replacing any with the same
    /// id: how tests seed a store.
    pub fn seed(&self, partner: Option<&str>, things: impl IntoIterator<Item = (K, T)>) {
        self.seed_as(partner, false, things);
    }

    /// Adds `things` as `partner`'s, test things when `test`.
    pub fn seed_as(
        &self,
        partner: Option<&str>,
        test: bool,
        things: impl IntoIterator<Item = (K, T)>,
    ) {
        let owner = partner.map(|partner| Owner {
            partner: Box::from(partner),
            test,
        });
        self.write().extend(things.into_iter().map(|(id, thing)| {
            let owner = owner.clone();
            (id, Row { owner, thing })
        }));
    }

    /// Adds `thing`, created by the request: its partner's, in its key's mode. A request
    /// without a key creates nothing (an internal error: the operation should have needed a
    /// key).
    pub fn insert<C: ?Sized>(
        &self,
        context: &RequestContext<C>,
        id: K,
        thing: T,
    ) -> Result<(), ApiError> {
        let owner = Owner::of(context).ok_or_else(|| {
            ApiError::internal("a write on a partner's table from a request without a key")
        })?;
        context.audit_members([self.member_of(id.borrow(), &thing)]);
        let mut rows = self.write();
        // A new id is drawn at random; one taken already is never overwritten, least of all
        // another partner's or mode's thing.
        if rows.contains_key(id.borrow()) {
            return Err(ApiError::internal(format!(
                "a create drew the id {id}, which is taken"
            )));
        }
        rows.insert(
            id,
            Row {
                owner: Some(owner),
                thing,
            },
        );
        Ok(())
    }

    /// Creates `thing`, with id `id`, as the request's partner's, once per `Idempotency-Key`
    /// (`key`, sent with `body`: `api::idempotency`): `201 Created`, its `Location` the
    /// request's path and the id (`/v1/plans/pl_...`), and the thing.
    pub async fn create<C: ?Sized, B: Serialize>(
        &self,
        context: &RequestContext<C>,
        (key, body): (&IdempotencyKey, &B),
        id: K,
        thing: T,
    ) -> Result<Created, ApiError>
    where
        T: Serialize,
    {
        let create = async {
            // The path as the router decoded it, written as a path may be (`%`-encoded
            // where it must be): a header value of ASCII, whatever the client sent.
            let path = crate::edge::view::path_for_log(context.path());
            let created = Created::new(&format!("{path}/{id}"), &thing)?;
            self.insert(context, id, thing)?;
            Ok(created)
        };
        let answer = self.replays.once(context, key, body, create).await?;
        // A replay's record names the thing's member too, as the create's did.
        if let Some(row) = self.read().get(answer.id()) {
            context.audit_members([self.member_of(answer.id(), &row.thing)]);
        }
        Ok(answer)
    }

    /// A copy of the thing with `id`, when the request may see it; the 404 otherwise.
    pub fn get<C: ?Sized>(&self, context: &RequestContext<C>, id: &K) -> Result<T, ApiError> {
        let rows = self.read();
        match rows.get(id.borrow()) {
            Some(row) if row.visible_to(asker(context)) => {
                context.audit_members([self.member_of(id.borrow(), &row.thing)]);
                Ok(row.thing.clone())
            }
            _ => Err(context.no_such(self.kind, id.borrow())),
        }
    }

    /// Changes the thing with `id` by `change`, which may refuse (a state that does not allow
    /// it: `state_conflict`) and then leaves it as it was; the 404 when it is not the request's
    /// own (another partner's or mode's, or a shared thing, read-only through the API).
    /// `change`'s answer is the request's (the changed thing, usually).
    pub fn update<C: ?Sized, R>(
        &self,
        context: &RequestContext<C>,
        id: &K,
        change: impl FnOnce(&mut T) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        let mut rows = self.write();
        let row = match rows.get_mut(id.borrow()) {
            Some(row) if row.changeable_by(asker(context)) => row,
            _ => return Err(context.no_such(self.kind, id.borrow())),
        };
        context.audit_members([self.member_of(id.borrow(), &row.thing)]);
        let mut changed = row.thing.clone();
        let answer = change(&mut changed)?;
        row.thing = changed;
        Ok(answer)
    }

    /// The page `query` asks for of the things the request may see, in id order, the ids their
    /// cursors.
    pub fn page<C: ?Sized>(
        &self,
        context: &RequestContext<C>,
        query: &ListQuery,
    ) -> Result<List<T>, ApiError> {
        let rows = self.read();
        let after = match &query.starting_after {
            Some(cursor) => Bound::Excluded(cursor.as_str()),
            None => Bound::Unbounded,
        };
        let asker = asker(context);
        let visible = rows
            .range::<str, _>((after, Bound::Unbounded))
            .filter(|(_, row)| row.visible_to(asker))
            .map(|(id, row)| (id.borrow(), &row.thing));
        let page = List::page(visible, query.limit, |(id, _)| Cursor::new(id))?;
        context.audit_members(
            page.data()
                .iter()
                .map(|(id, thing)| self.member_of(id, thing)),
        );
        Ok(page.map(|(_, thing)| thing.clone()))
    }

    /// How many things it holds, whoever's.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    fn read(&self) -> RwLockReadGuard<'_, BTreeMap<K, Row<T>>> {
        self.rows
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<K, Row<T>>> {
        self.rows
            .write()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}
