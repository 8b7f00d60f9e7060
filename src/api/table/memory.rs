//! A table's things in this process's memory: the store without a database, each replica its
//! own and lost at a restart. Every read and change holds the lock only for the copy or the
//! change itself, never across an `.await`, and a panic while it was held does not make it
//! unusable. Its creates' `Idempotency-Key`s are kept beside it (`api::idempotency::Replays`).

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::ops::Bound;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde::Serialize;

use super::{Table, Thing, asker};
use crate::api::idempotency::Replays;
use crate::api::list::{Cursor, List, ListQuery};
use crate::api::write::Created;
use crate::edge::context::RequestContext;
use crate::edge::header::IdempotencyKey;
use crate::errors::ApiError;

/// The things by id, and the keys of their creates.
#[derive(Debug)]
pub(super) struct Rows<K, T> {
    rows: RwLock<BTreeMap<K, Row<T>>>,
    replays: Replays,
}

impl<K, T> Default for Rows<K, T> {
    fn default() -> Self {
        Rows {
            rows: RwLock::new(BTreeMap::new()),
            replays: Replays::default(),
        }
    }
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
    fn is(&self, (partner, test): (&str, bool)) -> bool {
        *self.partner == *partner && self.test == test
    }
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

impl<K: Ord + Borrow<str> + Display, T: Thing> Rows<K, T> {
    pub(super) fn seed(
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

    /// Adds `thing`, created by the request (which has a key: `Table::create` checked).
    fn insert<C: ?Sized>(
        &self,
        table: &Table<K, T>,
        context: &RequestContext<C>,
        id: K,
        thing: T,
    ) -> Result<(), ApiError> {
        let (partner, test) = asker(context).ok_or_else(|| {
            ApiError::internal("a write on a partner's table from a request without a key")
        })?;
        context.audit_members([table.member_of(id.borrow(), &thing)]);
        let mut rows = self.write();
        // A new id is drawn at random; one taken already is never overwritten, least of all
        // another partner's or mode's thing.
        if rows.contains_key(id.borrow()) {
            return Err(ApiError::internal(format!(
                "a create drew the id {id}, which is taken"
            )));
        }
        let owner = Owner {
            partner: Box::from(partner),
            test,
        };
        rows.insert(
            id,
            Row {
                owner: Some(owner),
                thing,
            },
        );
        Ok(())
    }

    pub(super) async fn create<C: ?Sized, B: Serialize>(
        &self,
        table: &Table<K, T>,
        context: &RequestContext<C>,
        (key, body): (&IdempotencyKey, &B),
        (id, thing): (K, T),
        created: Created,
    ) -> Result<Created, ApiError> {
        let create = async {
            self.insert(table, context, id, thing)?;
            Ok(created)
        };
        let answer = self.replays.once(context, key, body, create).await?;
        // A replay's record names the member its answer holds, as the create's did.
        table.audit_member_of_answer(context, &answer)?;
        Ok(answer)
    }

    pub(super) fn get<C: ?Sized>(
        &self,
        table: &Table<K, T>,
        context: &RequestContext<C>,
        id: &str,
    ) -> Result<T, ApiError> {
        let rows = self.read();
        match rows.get(id) {
            Some(row) if row.visible_to(asker(context)) => {
                context.audit_members([table.member_of(id, &row.thing)]);
                Ok(row.thing.clone())
            }
            _ => Err(context.no_such(table.kind, id)),
        }
    }

    pub(super) fn update<C: ?Sized, R>(
        &self,
        table: &Table<K, T>,
        context: &RequestContext<C>,
        id: &str,
        change: impl FnOnce(&mut T) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        let mut rows = self.write();
        let row = match rows.get_mut(id) {
            Some(row) if row.changeable_by(asker(context)) => row,
            _ => return Err(context.no_such(table.kind, id)),
        };
        context.audit_members([table.member_of(id, &row.thing)]);
        let mut changed = row.thing.clone();
        let answer = change(&mut changed)?;
        row.thing = changed;
        Ok(answer)
    }

    pub(super) fn remove<C: ?Sized>(
        &self,
        table: &Table<K, T>,
        context: &RequestContext<C>,
        id: &str,
        refuse: impl FnOnce(&T) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        let mut rows = self.write();
        let row = match rows.get(id) {
            Some(row) if row.changeable_by(asker(context)) => row,
            _ => return Err(context.no_such(table.kind, id)),
        };
        context.audit_members([table.member_of(id, &row.thing)]);
        refuse(&row.thing)?;
        rows.remove(id);
        Ok(())
    }

    pub(super) fn page<C: ?Sized>(
        &self,
        table: &Table<K, T>,
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
                .map(|(id, thing)| table.member_of(id, thing)),
        );
        Ok(page.map(|(_, thing)| thing.clone()))
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
