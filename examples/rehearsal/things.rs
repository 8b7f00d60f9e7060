//! The endpoints to come, rehearsed: things that belong to a partner, read and changed with a
//! partner key and audited as member data are: a list with pagination and a thing by id (the
//! `things:read` scope), a create with an `Idempotency-Key`, a PATCH, an action, `/archive`,
//! and a DELETE (`things:write`), with a store behind them shared by every worker and the
//! request context in their log lines. Never in `openapi/v1.yaml` nor in the `partner-api`
//! binary: the test build mounts it (`tests/api/things.rs`, which tests it) and so does the
//! example server beside this file (`cargo run --example rehearsal`), the same module, so
//! that drills, benchmarks and reviews run as a process exactly what the tests check. It was
//! written by following the recipe in CONTRIBUTING.md ("How to add an endpoint") and nothing
//! else, to prove that the shared machinery is all a new endpoint needs. Its document (the
//! API's with these endpoints) is generated, linted by `scripts/lint-openapi` with the
//! project's rules, and every response the tests receive is checked against it, as ping's are
//! against `openapi/v1.yaml`.

use actix_web::web::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use partner_api::api::date::Date;
use partner_api::api::list::{List, ListQuery};
use partner_api::api::money::Money;
use partner_api::api::table::Table;
use partner_api::api::timestamp::Timestamp;
use partner_api::api::write::{Created, Deleted, Patch, not_null};
use partner_api::database::Database;
use partner_api::edge::context::RequestContext;
use partner_api::edge::deprecation::Deprecation;
use partner_api::edge::extract::{Body, NoBody, NoQuery, Path, Query};
use partner_api::edge::header::IdempotencyKey;
use partner_api::edge::mount::{Endpoints, Mount};
use partner_api::edge::view::path_for_log;
use partner_api::errors::{ApiError, ErrorCode};
use partner_api::{id_kind, mount, text_kind};

/// How many things the store holds at start (`th_0001` to `th_0025`, [`TEST_PARTNER`]'s).
pub const THINGS: u16 = 25;

id_kind!(ThingId, "th", "thing");

/// A thing.
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
pub struct Thing {
    /// Kind of object: always `thing`.
    pub object: ThingObject,
    /// The thing's id.
    pub id: ThingId,
    /// What the partner calls the thing.
    pub label: Label,
    /// Whether it may still change: `active`, or `archived` (for good).
    pub status: ThingStatus,
    /// The day it starts, if one is set.
    pub starts_on: Option<Date>,
    /// What it costs, if it has a price.
    pub price: Option<Money>,
    /// When it was created.
    pub created: Timestamp,
}

/// The `object` value of a thing.
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThingObject {
    Thing,
}

/// Whether a thing may still change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThingStatus {
    Active,
    Archived,
}

text_kind!(
    Label,
    1,
    200,
    "What the partner calls a thing",
    example = "Morning walks"
);

/// What the endpoints share (their context): the things.
pub struct ThingStore {
    pub things: Table<ThingId, Thing>,
}

/// The partner the test store's things belong to.
pub const TEST_PARTNER: &str = "pt_test";

/// When the test store's things were created.
pub const SEEDED_AT: &str = "2026-11-25T00:00:00Z";

impl ThingStore {
    /// `count` things of `pt_test`, `th_0001` onwards, kept where `database` says (in a
    /// database, those there already are kept as they are).
    pub fn with_count(database: &Database, count: u16) -> Result<Self, String> {
        let things = Table::new("thing", database);
        things.seed(
            Some(TEST_PARTNER),
            (1..=count).map(|n| {
                let id = ThingId::new(&format!("th_{n:04}")).expect("an id's shape");
                let thing = Thing {
                    object: ThingObject::Thing,
                    id: id.clone(),
                    label: Label::new(&format!("Thing number {n}")).expect("a label's length"),
                    status: ThingStatus::Active,
                    starts_on: None,
                    price: None,
                    created: Timestamp::parse(SEEDED_AT).expect("a moment's shape"),
                };
                (id, thing)
            }),
        )?;
        Ok(ThingStore { things })
    }
}

/// A page of things, named for the document (`ThingList`).
pub type ThingList = List<Thing>;

/// The path of an operation on one thing.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Path)]
pub struct ThingPath {
    /// The thing's id.
    #[param(example = "th_0001")]
    pub thing: ThingId,
}

/// The body of `create_thing`.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewThing {
    /// What the partner calls the thing.
    pub label: Label,
    /// The day it starts, if one is known.
    #[serde(default)]
    pub starts_on: Option<Date>,
    /// What it costs, if it has a price.
    #[serde(default)]
    pub price: Option<Money>,
}

/// The body of `update_thing`: the fields to change, each left out to keep it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThingChange {
    /// A new label.
    #[serde(default, deserialize_with = "not_null")]
    #[schema(value_type = String, nullable = false, required = false)]
    pub label: Option<Label>,
    /// A new day it starts, or `null` to unset it.
    #[serde(default)]
    #[schema(value_type = Option<Date>, required = false)]
    pub starts_on: Patch<Date>,
    /// A new price, or `null` to unset it.
    #[serde(default)]
    #[schema(value_type = Option<Money>, required = false)]
    pub price: Patch<Money>,
}

/// List things
///
/// Your things, in id order, one page at a time.
#[utoipa::path(
    get,
    path = "/v1/things",
    tag = "Things",
    security(("partner_key" = ["things:read"])),
    extensions(("x-member-data" = json!(true))),
    params(ListQuery),
    responses((status = 200, description = "A page of things.", body = ThingList)),
)]
pub async fn list_things(
    context: RequestContext<ThingStore>,
    Query(query): Query<ListQuery>,
    _body: Body<NoBody>,
) -> Result<Json<ThingList>, ApiError> {
    let page = context.app().things.page(&context, &query).await?;
    log::info!(
        "listed {} things on {}",
        page.data().len(),
        context.route().unwrap_or("-")
    );
    Ok(Json(page))
}

/// Retrieve a thing
///
/// The thing with the id in the path.
#[utoipa::path(
    get,
    path = "/v1/things/{thing}",
    tag = "Things",
    security(("partner_key" = ["things:read"])),
    extensions(("x-member-data" = json!(true))),
    params(ThingPath),
    responses((status = 200, description = "The thing.", body = Thing)),
)]
pub async fn retrieve_thing(
    context: RequestContext<ThingStore>,
    Path(path): Path<ThingPath>,
    _query: Query<NoQuery>,
    _body: Body<NoBody>,
) -> Result<Json<Thing>, ApiError> {
    let found = context.app().things.get(&context, &path.thing).await;
    if found.is_err() {
        log::info!(
            "no thing {} for {} {}",
            path.thing,
            context.method(),
            path_for_log(context.path())
        );
    }
    found.map(Json)
}

/// Create a thing
///
/// A new thing, active. Send an `Idempotency-Key` to make sending it again safe.
#[utoipa::path(
    post,
    path = "/v1/things",
    tag = "Things",
    security(("partner_key" = ["things:write"])),
    extensions(("x-member-data" = json!(true))),
    params(IdempotencyKey),
    request_body = NewThing,
    responses((
        status = 201,
        description = "The thing, created.",
        body = Thing,
        headers(("Location" = String, description = "The new thing's path.")),
    )),
)]
pub async fn create_thing(
    context: RequestContext<ThingStore>,
    key: IdempotencyKey,
    _query: Query<NoQuery>,
    Body(new): Body<NewThing>,
) -> Result<Created, ApiError> {
    let id = ThingId::generate();
    let thing = Thing {
        object: ThingObject::Thing,
        id: id.clone(),
        label: new.label.clone(),
        status: ThingStatus::Active,
        starts_on: new.starts_on,
        price: new.price.clone(),
        created: Timestamp::now(),
    };
    let things = &context.app().things;
    things.create(&context, (&key, &new), id, thing).await
}

/// Update a thing
///
/// Changes the fields the body names, and only those; an archived thing cannot change.
#[utoipa::path(
    patch,
    path = "/v1/things/{thing}",
    tag = "Things",
    security(("partner_key" = ["things:write"])),
    extensions(("x-member-data" = json!(true)), ("x-error-codes" = json!(["state_conflict"]))),
    params(ThingPath),
    request_body = ThingChange,
    responses((status = 200, description = "The thing, changed.", body = Thing)),
)]
pub async fn update_thing(
    context: RequestContext<ThingStore>,
    Path(path): Path<ThingPath>,
    _query: Query<NoQuery>,
    Body(change): Body<ThingChange>,
) -> Result<Json<Thing>, ApiError> {
    let things = &context.app().things;
    let changed = things.update(&context, &path.thing, |thing| {
        refuse_if_archived(thing)?;
        if let Some(label) = change.label {
            thing.label = label;
        }
        change.starts_on.apply_to(&mut thing.starts_on);
        change.price.apply_to(&mut thing.price);
        Ok(thing.clone())
    });
    changed.await.map(Json)
}

/// Archive a thing
///
/// Archives the thing for good: it can no longer change.
#[utoipa::path(
    post,
    path = "/v1/things/{thing}/archive",
    tag = "Things",
    security(("partner_key" = ["things:write"])),
    extensions(("x-member-data" = json!(true)), ("x-error-codes" = json!(["state_conflict"]))),
    params(ThingPath),
    responses((status = 200, description = "The thing, archived.", body = Thing)),
)]
pub async fn archive_thing(
    context: RequestContext<ThingStore>,
    Path(path): Path<ThingPath>,
    _query: Query<NoQuery>,
    _body: Body<NoBody>,
) -> Result<Json<Thing>, ApiError> {
    let things = &context.app().things;
    let archived = things.update(&context, &path.thing, |thing| {
        refuse_if_archived(thing)?;
        thing.status = ThingStatus::Archived;
        Ok(thing.clone())
    });
    archived.await.map(Json)
}

/// Delete a thing
///
/// Removes the thing for good, archived or not; its id is never used again.
#[utoipa::path(
    delete,
    path = "/v1/things/{thing}",
    tag = "Things",
    security(("partner_key" = ["things:write"])),
    extensions(("x-member-data" = json!(true))),
    params(ThingPath),
    responses((status = 200, description = "The thing, deleted.", body = Deleted)),
)]
pub async fn delete_thing(
    context: RequestContext<ThingStore>,
    Path(path): Path<ThingPath>,
    _query: Query<NoQuery>,
    _body: Body<NoBody>,
) -> Result<Json<Deleted>, ApiError> {
    let things = &context.app().things;
    things
        .remove(&context, &path.thing, |_| Ok(()))
        .await
        .map(Json)
}

/// 409 `state_conflict` for an archived thing.
fn refuse_if_archived(thing: &Thing) -> Result<(), ApiError> {
    if thing.status == ThingStatus::Archived {
        return Err(
            ApiError::new(ErrorCode::StateConflict).with_message(format!(
                "The thing {} is archived: it cannot change.",
                thing.id
            )),
        );
    }
    Ok(())
}

/// The endpoints, as `api::ENDPOINTS` would hold them: mounted, their tag described, and
/// retrieving a thing deprecated, to exercise that machinery (a list of things with
/// `starting_after` would be its successor).
pub const ENDPOINTS: Endpoints<ThingStore> = Endpoints {
    mount,
    tags: &[("Things", "Things, to rehearse the endpoints to come.")],
    deprecations: &[Deprecation {
        operation_id: "retrieve_thing",
        deprecated_on: "2026-11-25",
        sunset_on: Some("2027-12-31"),
    }],
};

fn mount(mount: &mut Mount<'_, '_, ThingStore>) {
    mount!(mount, list_things);
    mount!(mount, retrieve_thing);
    mount!(mount, create_thing);
    mount!(mount, update_thing);
    mount!(mount, archive_thing);
    mount!(mount, delete_thing);
}
