//! The store contract, held against both stores a table can keep its things in: this process's
//! memory and a real PostgreSQL (Debian's package), started by each test on a free loopback
//! port, as a role of its own, and stopped by its PID. The same requests get the same answers
//! from both; with PostgreSQL, replicas share things and `Idempotency-Key`s, every read and
//! change of member data commits its audit record, which no one can change or remove, and a
//! database that is down, slow or behind the release's schema costs member data a 503 in the
//! contract's shape, within its deadline, and ping nothing.
//!
//! Without PostgreSQL's server installed these tests print that they were skipped and pass, so
//! that `cargo test` passes on a fresh machine; CI installs it and sets
//! `PARTNER_API_REQUIRE_POSTGRES=1`, which turns a missing server into a failure.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use partner_api::database::DatabaseSettings;
use partner_api::server::config::Secret;
use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app_seeded, spawn_app_with, work_folder};

/// The service's role: what `partner-api migrate --service-role` grants.
const SERVICE_ROLE: &str = "partner_api";
const SERVICE_PASSWORD: &str = "service-secret-1";
/// The schema's owner, who migrates.
const OWNER: &str = "owner";
const OWNER_PASSWORD: &str = "owner-secret-1";

/// A PostgreSQL server of this test's own, its cluster in a folder of its own, stopped (by
/// PID) and removed when dropped.
struct PostgresServer {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl PostgresServer {
    /// Starts one on a free port with a database `partner_api`, the service's role and its
    /// schema owner, or `None` (with a line saying so) when PostgreSQL is not installed and
    /// CI did not ask for these tests. `migrated`: with the release's schema.
    fn start(test: &str, migrated: bool) -> Option<PostgresServer> {
        let Some(bin) = installed() else {
            assert!(
                std::env::var_os("PARTNER_API_REQUIRE_POSTGRES").is_none(),
                "PARTNER_API_REQUIRE_POSTGRES is set but PostgreSQL's server is not installed"
            );
            println!("{test}: skipped, PostgreSQL is not installed (CI installs it and runs this)");
            return None;
        };
        let data = work_folder("postgres");
        let password_file = data.join("owner-password");
        std::fs::write(&password_file, OWNER_PASSWORD).unwrap();
        let cluster = data.join("cluster");
        as_postgres_owner(&data);
        let initdb = postgres_command(&bin.join("initdb"))
            .arg("-D")
            .arg(&cluster)
            .args(["-U", OWNER, "-E", "UTF8", "--auth-local=trust"])
            .args(["--auth-host=scram-sha-256", "--no-instructions"])
            .arg(format!("--pwfile={}", password_file.display()))
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert!(
            initdb.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        let port = free_port();
        let mut server = PostgresServer {
            bin,
            data,
            port,
            child: None,
        };
        server.run();
        server.owner_batch(&format!(
            "CREATE ROLE {SERVICE_ROLE} LOGIN PASSWORD '{SERVICE_PASSWORD}'"
        ));
        server.owner_batch(&format!("CREATE DATABASE partner_api OWNER {OWNER}"));
        if migrated {
            server.migrate();
        }
        Some(server)
    }

    /// Starts (or starts again) the server and waits until it answers.
    fn run(&mut self) {
        let child = postgres_command(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.data.join("cluster"))
            .args([
                "-p",
                &self.port.to_string(),
                "-c",
                "listen_addresses=127.0.0.1",
            ])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", self.data.display()))
            // A test's cluster needs no durability against a power cut.
            .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err()
            || self.try_owner_batch("postgres", "SELECT 1").is_err()
        {
            assert!(Instant::now() < deadline, "postgres did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops it as an operator's `kill -9` would: no shutdown, connections cut.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
            // The postmaster's children notice it is gone and end; wait for its port.
            let deadline = Instant::now() + Duration::from_secs(10);
            while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = std::fs::remove_file(self.data.join("cluster/postmaster.pid"));
        }
    }

    /// Stops it quickly and cleanly (SIGINT: fast shutdown), by PID.
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let pid = i32::try_from(child.id()).unwrap();
            // SAFETY: a signal to the process this test started.
            unsafe { libc::kill(pid, libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().unwrap().is_none() {
                if Instant::now() > deadline {
                    child.kill().unwrap();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// The settings of the service's connection: its role, its password from a file.
    fn settings(&self, folder: &Path) -> DatabaseSettings {
        let password_file = folder.join("database-password");
        std::fs::write(&password_file, SERVICE_PASSWORD).unwrap();
        DatabaseSettings {
            url: self.url(SERVICE_ROLE),
            password_file: Some(password_file),
            ca_file: None,
            pool_size: 4,
            timeout: Duration::from_millis(1_000),
        }
    }

    fn url(&self, role: &str) -> String {
        format!(
            "postgres://{role}@127.0.0.1:{}/partner_api?sslmode=disable",
            self.port
        )
    }

    /// `partner-api migrate --service-role partner_api`, as the owner.
    fn migrate(&self) {
        let settings = DatabaseSettings {
            url: format!(
                "postgres://{OWNER}:{OWNER_PASSWORD}@127.0.0.1:{}/partner_api?sslmode=disable",
                self.port
            ),
            password_file: None,
            ca_file: None,
            pool_size: 1,
            timeout: Duration::from_secs(10),
        };
        let applied =
            partner_api::database::commands::migrate(&settings, Some(SERVICE_ROLE)).unwrap();
        assert!(applied.is_empty() || applied == [1, 2, 3], "{applied:?}");
    }

    /// Runs `sql` as the owner on the database `partner_api`.
    fn owner_batch(&self, sql: &str) {
        let database = if sql.starts_with("CREATE") {
            "postgres"
        } else {
            "partner_api"
        };
        self.try_owner_batch(database, sql).unwrap();
    }

    fn try_owner_batch(&self, database: &str, sql: &str) -> Result<(), String> {
        self.try_as(OWNER, OWNER_PASSWORD, database, sql)
            .map(|_| ())
    }

    /// Runs `sql` as `role` and returns the rows of its last statement as JSON text, one a
    /// line, or the server's error.
    fn try_as(
        &self,
        role: &str,
        password: &str,
        database: &str,
        sql: &str,
    ) -> Result<Vec<Value>, String> {
        query_as(self.port, (role, password, database), sql)
            .join()
            .unwrap()
    }

    /// The first column of `sql`'s rows, as the owner.
    fn rows(&self, sql: &str) -> Vec<Value> {
        self.try_as(OWNER, OWNER_PASSWORD, "partner_api", sql)
            .unwrap()
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

/// Runs `sql` (statements of one implicit transaction) on a connection of its own, on a thread
/// of its own, as `role`: the rows of its last statement's first column.
fn query_as(
    port: u16,
    (role, password, database): (&str, &str, &str),
    sql: &str,
) -> std::thread::JoinHandle<Result<Vec<Value>, String>> {
    let url = format!(
        "postgres://{role}:{password}@127.0.0.1:{port}/{database}?sslmode=disable&connect_timeout=5",
    );
    let sql = sql.to_owned();
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .map_err(|error| partner_api::database::cause(&error))?;
                let driving = tokio::spawn(connection);
                let messages = client
                    .simple_query(&sql)
                    .await
                    .map_err(|error| partner_api::database::cause(&error))?;
                drop(client);
                let _ = driving.await;
                Ok(messages
                    .into_iter()
                    .filter_map(|message| match message {
                        tokio_postgres::SimpleQueryMessage::Row(row) => Some(json!(row.get(0))),
                        _ => None,
                    })
                    .collect())
            })
    })
}

/// The folder of PostgreSQL's server programs, the newest installed.
fn installed() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| Some(entry.ok()?.path().join("bin")))
        .filter(|bin| bin.join("postgres").exists() && bin.join("initdb").exists())
        .collect();
    found.sort_by_key(|bin| {
        bin.parent()
            .and_then(|version| version.file_name()?.to_str()?.parse::<u32>().ok())
    });
    found.pop()
}

/// PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user (the
/// package's), which owns the cluster's folder.
fn is_root() -> bool {
    // SAFETY: no arguments, no memory.
    unsafe { libc::geteuid() == 0 }
}

fn as_postgres_owner(folder: &Path) {
    if is_root() {
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(folder)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

fn postgres_command(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("setpriv");
        command
            .args([
                "--reuid=postgres",
                "--regid=postgres",
                "--init-groups",
                "--",
            ])
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An app on `server`'s database as `url` says, its password `password`.
async fn app_at(url: String, password: &str) -> TestApp {
    let password_file = work_folder("database-settings").join("password");
    std::fs::write(&password_file, password).unwrap();
    spawn_app_seeded(
        move |config| {
            config.database_url = Some(url.parse::<Secret>().unwrap());
            config.database_password_file = Some(password_file);
        },
        0,
    )
    .await
}

/// An app keeping its things in `server`'s database, seeded with `things` things (kept when
/// there already), reading `keys_file` when given (a second replica shares the first's keys).
async fn app_on(server: &PostgresServer, things: u16, keys_file: Option<PathBuf>) -> TestApp {
    let settings = server.settings(&work_folder("database-settings"));
    spawn_app_seeded(
        move |config| {
            config.database_url = Some(settings.url.parse::<Secret>().unwrap());
            config.database_password_file = settings.password_file;
            config.database_pool_size = 4;
            config.database_timeout_ms = 1_000;
            if let Some(keys_file) = keys_file {
                config.keys_file = Some(keys_file);
            }
        },
        things,
    )
    .await
}

/// A PATCH of the thing `id` with the test partner's key.
fn patch(app: &TestApp, id: &str, body: &str) -> reqwest::RequestBuilder {
    app.keyed("PATCH", &format!("/v1/things/{id}"))
        .header("content-type", "application/json")
        .body(body.to_owned())
}

/// What both stores answer alike: a create, its replay and its refusal, a read, a change, a
/// refused change, a page, and partners and modes kept apart.
async fn the_store_contract_holds(app: &TestApp) {
    // Seeded: pt_test's th_0001 to th_0003.
    let page = app.get_keyed("/v1/things?limit=2").await;
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(page.json()["has_more"], json!(true));
    assert_eq!(page.json()["next_cursor"], json!("th_0002"));
    let ids: Vec<&str> = page.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|thing| thing["id"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .leak()
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(ids, ["th_0001", "th_0002"]);
    let rest = app
        .get_keyed("/v1/things?limit=2&starting_after=th_0002")
        .await;
    assert_eq!(rest.json()["has_more"], json!(false));
    assert_eq!(rest.json()["next_cursor"], Value::Null);
    assert_eq!(rest.json()["data"][0]["id"], json!("th_0003"));

    let create = |key: &'static str, label: &'static str| {
        app.keyed("POST", "/v1/things")
            .header("idempotency-key", key)
            .header("content-type", "application/json")
            .body(format!(
                r#"{{"label": "{label}", "starts_on": "2026-12-01"}}"#
            ))
    };
    // No store keeps U+0000; both refuse it before the handler runs.
    let nul = app.send(create("key-nul", "Knee\\u0000class")).await;
    assert_eq!(nul.status, 400, "{}", nul.text());
    assert_eq!(nul.json()["error"]["code"], json!("parameter_invalid"));
    assert_eq!(nul.json()["error"]["param"], json!("label"));
    assert_eq!(
        nul.json()["error"]["message"],
        json!("Invalid value for parameter label: it must not contain the character U+0000.")
    );
    let created = app.send(create("key-one", "Knee class")).await;
    assert_eq!(created.status, 201, "{}", created.text());
    let thing = created.json();
    let id = thing["id"].as_str().unwrap().to_owned();
    assert_eq!(created.header("location"), format!("/v1/things/{id}"));
    let created_at = crate::helpers::created_just_now(&thing);
    assert_eq!(
        thing,
        json!({"object": "thing", "id": id, "label": "Knee class", "status": "active",
               "starts_on": "2026-12-01", "price": null, "created": created_at})
    );
    let again = app.send(create("key-one", "Knee class")).await;
    assert_eq!(
        (again.status, again.body.clone()),
        (201, created.body.clone())
    );
    assert_eq!(again.header("location"), format!("/v1/things/{id}"));
    let reused = app.send(create("key-one", "Hip class")).await;
    assert_eq!(reused.status, 422);
    assert_eq!(
        reused.json()["error"]["code"],
        json!("idempotency_key_reused")
    );

    let read = app.get_keyed(&format!("/v1/things/{id}")).await;
    assert_eq!((read.status, read.json()), (200, thing.clone()));
    let changed = app.send(patch(app, &id, r#"{"starts_on": null}"#)).await;
    assert_eq!(changed.status, 200);
    assert_eq!(changed.json()["starts_on"], Value::Null);
    let archived = app
        .send(app.keyed("POST", &format!("/v1/things/{id}/archive")))
        .await;
    assert_eq!(archived.json()["status"], json!("archived"));
    let refused = app.send(patch(app, &id, r#"{"label": "Other"}"#)).await;
    assert_eq!(refused.status, 409);
    assert_eq!(refused.json()["error"]["code"], json!("state_conflict"));
    let kept = app.get_keyed(&format!("/v1/things/{id}")).await;
    assert_eq!(kept.json()["label"], json!("Knee class"));
    assert_eq!(kept.json()["status"], json!("archived"));

    // Another partner, and the same partner's test key, find nothing of it.
    let other = app.key_for("pt_other", &["things:read", "things:write"]);
    let test = app.test_key_for("pt_test", &["things:read", "things:write"]);
    for key in [&other, &test] {
        let missing = app
            .send(
                app.request("GET", &format!("/v1/things/{id}"))
                    .bearer_auth(key),
            )
            .await;
        assert_eq!(missing.status, 404);
        assert_eq!(missing.json()["error"]["code"], json!("resource_missing"));
        let none = app
            .send(app.request("GET", "/v1/things").bearer_auth(key))
            .await;
        assert_eq!(none.json()["data"], json!([]));
        // The same Idempotency-Key is theirs apart: a create of their own.
        let theirs = app
            .send(
                app.request("POST", "/v1/things")
                    .bearer_auth(key)
                    .header("idempotency-key", "key-one")
                    .header("content-type", "application/json")
                    .body(r#"{"label": "Knee class", "starts_on": "2026-12-01"}"#),
            )
            .await;
        assert_eq!(theirs.status, 201);
        assert_ne!(theirs.json()["id"], json!(id));
        // Nor can they remove it.
        let kept = app
            .send(
                app.request("DELETE", &format!("/v1/things/{id}"))
                    .bearer_auth(key),
            )
            .await;
        assert_eq!(kept.status, 404);
        assert_eq!(kept.json()["error"]["code"], json!("resource_missing"));
    }

    // Its owner removes it, once: then it is missing, as one never made.
    let path = format!("/v1/things/{id}");
    let removed = app.send(app.keyed("DELETE", &path)).await;
    assert_eq!(removed.status, 200, "{}", removed.text());
    assert_eq!(
        removed.json(),
        json!({"object": "thing", "id": id, "deleted": true})
    );
    for gone in [
        app.send(app.keyed("DELETE", &path)).await,
        app.get_keyed(&path).await,
    ] {
        assert_eq!(gone.status, 404);
        assert_eq!(gone.json()["error"]["code"], json!("resource_missing"));
        let message = gone.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(
            message.starts_with(&format!("No such thing: '{id}'")),
            "{message}"
        );
    }
    // The create sent again with its key: its first answer, as any replay within the key's
    // 24 hours, though the thing is gone (its Location answers 404 now).
    let replayed = app.send(create("key-one", "Knee class")).await;
    assert_eq!(
        (replayed.status, replayed.body.clone()),
        (201, created.body.clone())
    );
}

#[actix_web::test]
async fn the_store_contract_holds_in_memory() {
    let app = spawn_app_seeded(|_| {}, 3).await;
    the_store_contract_holds(&app).await;
    // The last request, the replay of a removed thing's create, names the member its answer
    // holds: member data was sent again.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let last = loop {
        let records = app.audit_records(0).await;
        let last = records.last().unwrap().clone();
        if last["operation"] == "create_thing" || std::time::Instant::now() > deadline {
            break last;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(
        (&last["operation"], &last["status"]),
        (&json!("create_thing"), &json!(201))
    );
    assert_eq!(last["members"].as_array().unwrap().len(), 1, "{last}");
    assert!(
        last["members"][0].as_str().unwrap().starts_with("th_"),
        "{last}"
    );
}

#[actix_web::test]
async fn the_store_contract_holds_in_postgres() {
    let Some(server) = PostgresServer::start("the_store_contract_holds_in_postgres", true) else {
        return;
    };
    let app = app_on(&server, 3, None).await;
    the_store_contract_holds(&app).await;
    // What was answered is what was stored: the seeded three (the created one removed), and
    // one for each of the other partner and the test key.
    let owners = server.rows(
        "SELECT string_agg(coalesce(partner, '-') || ':' || test, ',' ORDER BY partner, test) \
         FROM resources WHERE kind = 'thing'",
    );
    assert_eq!(
        owners,
        [json!(
            "pt_other:false,pt_test:false,pt_test:false,pt_test:false,pt_test:true"
        )]
    );
}

#[actix_web::test]
async fn replicas_share_things_and_each_idempotency_key_creates_one_thing() {
    let Some(server) = PostgresServer::start("replicas_share_things", true) else {
        return;
    };
    let first = app_on(&server, 1, None).await;
    let second = app_on(&server, 1, Some(first.work.join("keys.json"))).await;
    // Both with the first's key: the second replica reads the first's key file.
    let writer = first.keys.writer.clone();
    async fn create(app: &TestApp, writer: &str, key: String) -> crate::helpers::TestResponse {
        app.send(
            app.request("POST", "/v1/things")
                .bearer_auth(writer)
                .header("idempotency-key", key)
                .header("content-type", "application/json")
                .body(r#"{"label": "Shared"}"#),
        )
        .await
    }
    for round in 0..20 {
        let key = format!("round-{round}");
        let (one, two) = futures_util::join!(
            create(&first, &writer, key.clone()),
            create(&second, &writer, key.clone())
        );
        let mut statuses = [one.status, two.status];
        statuses.sort_unstable();
        assert!(
            statuses == [201, 201] || statuses == [201, 409],
            "round {round}: {statuses:?}"
        );
        for answer in [&one, &two] {
            if answer.status == 409 {
                assert_eq!(
                    answer.json()["error"]["code"],
                    json!("idempotency_key_in_use")
                );
            }
        }
        // Sent again through either replica, the first answer.
        let created = if one.status == 201 { &one } else { &two };
        for app in [&first, &second] {
            let again = create(app, &writer, key.clone()).await;
            assert_eq!(
                (again.status, again.body.clone()),
                (201, created.body.clone())
            );
        }
        // A thing created through one replica is read through the other.
        let id = created.json()["id"].as_str().unwrap().to_owned();
        let read = second
            .send(
                second
                    .request("GET", &format!("/v1/things/{id}"))
                    .bearer_auth(&writer),
            )
            .await;
        assert_eq!((read.status, read.json()), (200, created.json()));
    }
    // A key being answered, through any replica, is in use: held here by a transaction of
    // the database's own for a second and a half.
    let holding = query_as(
        server.port,
        (OWNER, OWNER_PASSWORD, "partner_api"),
        "SELECT pg_advisory_xact_lock(hashtextextended('partner pt_test thing' || chr(10) || 'held', 0)); \
         SELECT pg_sleep(1.5)",
    );
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    let in_use = create(&second, &writer, "held".to_owned()).await;
    assert_eq!(in_use.status, 409);
    assert_eq!(
        in_use.json()["error"]["code"],
        json!("idempotency_key_in_use")
    );
    holding.join().unwrap().unwrap();
    assert_eq!(create(&first, &writer, "held".to_owned()).await.status, 201);
    assert_eq!(
        server.rows("SELECT count(*) FROM resources WHERE body->>'label' = 'Shared'"),
        [json!("21")]
    );
    assert_eq!(
        server.rows("SELECT count(*) FROM idempotency_keys"),
        [json!("21")]
    );
}

#[actix_web::test]
async fn every_read_and_change_commits_its_record_and_no_one_changes_a_record() {
    let Some(server) = PostgresServer::start("every_read_and_change_commits_its_record", true)
    else {
        return;
    };
    let app = app_on(&server, 2, None).await;
    assert_eq!(app.get_keyed("/v1/things/th_0001").await.status, 200);
    assert_eq!(app.get_keyed("/v1/things?limit=5").await.status, 200);
    assert_eq!(app.get_keyed("/v1/things/th_0404").await.status, 404);
    let changed = app
        .send(patch(&app, "th_0002", r#"{"label": "Renamed"}"#))
        .await;
    assert_eq!(changed.status, 200);
    let records: Vec<Value> = server
        .rows("SELECT record::text FROM audit_records ORDER BY sequence")
        .into_iter()
        .map(|text| serde_json::from_str(text.as_str().unwrap()).unwrap())
        .collect();
    let summary: Vec<Value> = records
        .iter()
        .map(|record| {
            json!([
                record["operation"],
                record["members"],
                record["status"],
                record["code"],
                record["partner"],
                record["livemode"]
            ])
        })
        .collect();
    assert_eq!(
        summary,
        [
            json!(["retrieve_thing", ["th_0001"], 200, null, "pt_test", true]),
            json!([
                "list_things",
                ["th_0001", "th_0002"],
                200,
                null,
                "pt_test",
                true
            ]),
            json!([
                "retrieve_thing",
                ["th_0404"],
                404,
                "resource_missing",
                "pt_test",
                true
            ]),
            json!(["update_thing", ["th_0002"], 200, null, "pt_test", true]),
        ]
    );
    // The service's role may append and read, never change or remove.
    for change in [
        "UPDATE audit_records SET record = '{}'",
        "DELETE FROM audit_records",
        "TRUNCATE audit_records",
    ] {
        let refused = server
            .try_as(SERVICE_ROLE, SERVICE_PASSWORD, "partner_api", change)
            .unwrap_err();
        assert!(
            refused.starts_with("permission denied for table audit_records (42501)"),
            "{change}: {refused}"
        );
        // Nor may the owner, short of dropping the trigger first.
        let refused = server
            .try_as(OWNER, OWNER_PASSWORD, "partner_api", change)
            .unwrap_err();
        assert!(
            refused.starts_with("audit_records is append-only:"),
            "{change}: {refused}"
        );
    }
    assert_eq!(
        server.rows("SELECT count(*) FROM audit_records"),
        [json!("4")]
    );
    // `partner-api audit export` writes them as they are, one a line.
    let export = |until: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_partner-api"));
        command.args([
            "audit",
            "export",
            "--since",
            "2000-01-01T00:00:00Z",
            "--partner",
            "pt_test",
        ]);
        if let Some(until) = until {
            command.args(["--until", until]);
        }
        let password_file = server
            .settings(&work_folder("export"))
            .password_file
            .unwrap();
        let exported = command
            .env("PARTNER_API_DATABASE_URL", server.url(SERVICE_ROLE))
            .env("PARTNER_API_DATABASE_PASSWORD_FILE", password_file)
            .output()
            .unwrap();
        assert!(
            exported.status.success(),
            "{}",
            String::from_utf8_lossy(&exported.stderr)
        );
        let lines: Vec<Value> = String::from_utf8(exported.stdout)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (lines, String::from_utf8(exported.stderr).unwrap())
    };
    let (lines, told) = export(Some("2100-01-01T00:00:00Z"));
    assert_eq!(lines, records);
    assert_eq!(
        told,
        "partner-api audit export: 4 records from 2000-01-01T00:00:00Z to 2100-01-01T00:00:00Z\n"
    );
    // Without --until, up to a minute before the database's now: records still being
    // committed are left for the next export, which starts there.
    let (lines, told) = export(None);
    assert_eq!(lines, Vec::<Value>::new());
    assert!(
        told.starts_with("partner-api audit export: 0 records from 2000-01-01T00:00:00Z to "),
        "{told}"
    );
}

/// The app's metrics, as its admin listener serves them.
async fn metrics_of(app: &TestApp) -> String {
    let response = app
        .client
        .get(format!("{}/metrics", app.admin_address))
        .send()
        .await
        .unwrap();
    response.text().await.unwrap()
}

/// The 503 member data gets while its database cannot serve it.
fn assert_unavailable(response: &crate::helpers::TestResponse) {
    assert_eq!(response.status, 503, "{}", response.text());
    assert_eq!(response.header("retry-after"), "1");
    assert_eq!(response.header("content-type"), "application/json");
    let error = &response.json()["error"];
    assert_eq!(error["type"], json!("api_error"));
    assert_eq!(error["code"], json!("service_unavailable"));
    assert_eq!(
        error["message"],
        json!(
            "Member data cannot be reached right now. Retry after the time given in the \
             Retry-After header, a create with the same Idempotency-Key."
        )
    );
}

#[actix_web::test]
async fn a_schema_behind_the_release_refuses_member_data_until_migrated() {
    let Some(server) = PostgresServer::start("a_schema_behind_the_release", false) else {
        return;
    };
    let app = app_on(&server, 0, None).await;
    assert_unavailable(&app.get_keyed("/v1/things").await);
    assert_eq!(app.get("/v1/ping").await.status, 200);
    let metrics = metrics_of(&app).await;
    assert!(
        metrics.contains("\npartner_api_database_schema_behind 1\n"),
        "{metrics}"
    );
    server.migrate();
    // Looked at again at most once a second.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let page = app.get_keyed("/v1/things").await;
        if page.status == 200 {
            assert_eq!(page.json()["data"], json!([]));
            break;
        }
        assert_unavailable(&page);
        assert!(
            Instant::now() < deadline,
            "still refused after the migration"
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_web::test]
async fn a_database_down_costs_member_data_a_503_within_its_deadline_and_ping_nothing() {
    let Some(mut server) = PostgresServer::start("a_database_down", true) else {
        return;
    };
    let app = app_on(&server, 1, None).await;
    assert_eq!(app.get_keyed("/v1/things/th_0001").await.status, 200);
    server.kill();
    for path in ["/v1/things/th_0001", "/v1/things"] {
        let started = Instant::now();
        let refused = app.get_keyed(path).await;
        assert_unavailable(&refused);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
    let create = || {
        app.keyed("POST", "/v1/things")
            .header("idempotency-key", "while-down")
            .header("content-type", "application/json")
            .body(r#"{"label": "Lost?"}"#)
    };
    assert_unavailable(&app.send(create()).await);
    assert_eq!(app.get("/v1/ping").await.status, 200);
    let metrics = metrics_of(&app).await;
    assert!(
        metrics.contains("\npartner_api_database_failures_total 3\n"),
        "{metrics}"
    );
    server.run();
    // The pool makes new connections; the create sent again is made once.
    let deadline = Instant::now() + Duration::from_secs(10);
    let created = loop {
        let created = app.send(create()).await;
        if created.status == 201 || Instant::now() > deadline {
            break created;
        }
        assert_unavailable(&created);
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(created.status, 201);
    assert_eq!(
        server.rows("SELECT count(*) FROM resources WHERE body->>'label' = 'Lost?'"),
        [json!("1")]
    );
}

#[actix_web::test]
async fn without_a_database_the_start_line_says_member_data_is_kept_in_this_process() {
    let _app = spawn_app_with(|_| {}).await;
    let said = crate::helpers::log_lines_containing("member data is kept in this process only");
    assert!(
        said.iter().any(|line| line.contains(
            "member data is kept in this process only (no --database-url): lost at a restart \
             and not shared with other replicas"
        )),
        "{said:?}"
    );
}

#[actix_web::test]
async fn tls_is_required_unless_the_url_says_otherwise_and_the_trails_owner_is_refused() {
    let Some(server) = PostgresServer::start("tls_is_required", true) else {
        return;
    };
    // The test's server offers no TLS: a URL without sslmode is refused, never sent in clear.
    let url = server.url(SERVICE_ROLE).replace("?sslmode=disable", "");
    let app = app_at(url, SERVICE_PASSWORD).await;
    assert_unavailable(&app.get_keyed("/v1/things").await);
    let said = crate::helpers::log_lines_containing("failed a list");
    assert!(
        said.iter().any(|line| line.contains("TLS")),
        "no line says why: {said:?}"
    );
    // A role that could change the trail serves nothing: a superuser, and a plain role that
    // owns the table.
    server.rows(
        "CREATE ROLE keeper LOGIN PASSWORD 'keeper-secret'; \
         ALTER TABLE audit_records OWNER TO keeper; \
         GRANT SELECT ON partner_api_migrations TO keeper",
    );
    for (role, password, power) in [
        (OWNER, OWNER_PASSWORD, "superuser"),
        ("keeper", "keeper-secret", "owns the trail"),
    ] {
        let app = app_at(server.url(role), password).await;
        assert_unavailable(&app.get_keyed("/v1/things").await);
        let said = crate::helpers::log_lines_containing(&format!(
            "({}:{}/partner_api as {role}) could change or remove audit records",
            "127.0.0.1", server.port
        ));
        assert!(
            said.iter().any(|line| line.contains(power)),
            "no line says why: {said:?}"
        );
    }
    // The service's own role is served.
    let app = app_on(&server, 0, None).await;
    assert_eq!(app.get_keyed("/v1/things").await.status, 200);
}

#[test]
fn a_new_database_password_is_taken_on_reload_for_the_connections_made_after() {
    let Some(server) = PostgresServer::start("a_new_database_password", true) else {
        return;
    };
    let settings = server.settings(&work_folder("database-reload"));
    let database = partner_api::database::Database::connect(&settings).unwrap();
    let partner_api::database::Database::Postgres(postgres) = &database else {
        panic!("a URL makes a PostgreSQL store");
    };
    let whoami = || {
        postgres.with_own_connection(async |client| {
            Ok(client
                .query_one("SELECT current_user::text", &[])
                .await?
                .get::<_, String>(0))
        })
    };
    assert_eq!(whoami().unwrap(), SERVICE_ROLE);
    // The password rotated, as an operator does: the role's, then the file's.
    server.rows(&format!(
        "ALTER ROLE {SERVICE_ROLE} PASSWORD 'rotated-secret-2'"
    ));
    let password_file = settings.password_file.clone().unwrap();
    std::fs::write(&password_file, "rotated-secret-2\n").unwrap();
    // Until the reload, the password read at start (refused now).
    let refused = whoami().unwrap_err();
    assert!(
        refused.contains("password authentication failed"),
        "{refused}"
    );
    assert!(database.reload("a test's SIGHUP"));
    assert_eq!(whoami().unwrap(), SERVICE_ROLE);
}

#[actix_web::test]
async fn keys_kept_past_a_day_are_forgotten_by_the_clean_up_and_may_be_used_again() {
    let Some(server) = PostgresServer::start("keys_kept_past_a_day", true) else {
        return;
    };
    let app = app_on(&server, 0, None).await;
    let create = || {
        app.keyed("POST", "/v1/things")
            .header("idempotency-key", "a-day-old")
            .header("content-type", "application/json")
            .body(r#"{"label": "Yesterday"}"#)
    };
    let first = app.send(create()).await;
    assert_eq!(first.status, 201);
    server.rows("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'");
    let database =
        partner_api::database::Database::connect(&server.settings(&work_folder("cleanup")))
            .unwrap();
    let partner_api::database::Database::Postgres(postgres) = &database else {
        panic!("a URL makes a PostgreSQL store");
    };
    assert_eq!(
        partner_api::api::table::forget_expired_keys(postgres)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        server.rows("SELECT count(*) FROM idempotency_keys"),
        [json!("0")]
    );
    // The key is free again: sent now, it creates a thing of its own.
    let again = app.send(create()).await;
    assert_eq!(again.status, 201);
    assert_ne!(again.json()["id"], first.json()["id"]);
}
