//! Where member data is kept: in this process ([`Database::Memory`], the default, what
//! `cargo run --release` uses: lost at a restart and not shared by replicas), or in PostgreSQL
//! ([`Database::Postgres`], `--database-url`), which every replica shares and which keeps what
//! it acknowledged. The API's tables (`api::table`) read and write through it; nothing else
//! does.
//!
//! PostgreSQL is reached through a pool of `--database-pool-size` connections made as they are
//! needed, over TLS unless the URL says `sslmode=disable` (rustls, the service's crypto
//! provider; the server's certificate checked against `--database-ca-file`, or the public
//! roots without it), its password from the URL or from `--database-password-file`, read again
//! on SIGHUP for connections made after. Every operation has one deadline,
//! `--database-timeout-ms`, for waiting on the pool, connecting and its statements (the server
//! also ends a statement past it, `statement_timeout`), well inside a request's own deadlines:
//! a database that is down, slow or unreachable costs a member-data request a 503
//! `service_unavailable` within it, never a hang, and ping and the rest of the service do not
//! notice. The schema is versioned (`migrations`): a replica whose schema is behind its
//! release refuses member-data operations with the same 503, and says why in its log, until
//! `partner-api migrate` has run.

pub mod commands;
pub mod migrations;

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Socket};

use crate::errors::ApiError;

/// What `--database-*` settings say.
#[derive(Clone, Debug)]
pub struct DatabaseSettings {
    /// `postgres://user@host:port/database?sslmode=require`, its password left out when a
    /// password file gives it.
    pub url: String,
    pub password_file: Option<PathBuf>,
    pub ca_file: Option<PathBuf>,
    pub pool_size: usize,
    pub timeout: Duration,
}

/// Where member data is kept; see the module documentation. Cloned into every table.
#[derive(Clone, Debug, Default)]
pub enum Database {
    /// In this process: lost at a restart, each replica its own.
    #[default]
    Memory,
    /// In PostgreSQL.
    Postgres(Arc<Postgres>),
}

impl Database {
    /// PostgreSQL as `settings` say: the pool is made (no connection yet: the first
    /// operation makes one), the password file read; an error names the setting at fault.
    pub fn connect(settings: &DatabaseSettings) -> Result<Database, String> {
        Postgres::new(settings).map(|postgres| Database::Postgres(Arc::new(postgres)))
    }

    /// Whether what is stored survives this process and is shared by every replica.
    pub fn is_durable(&self) -> bool {
        matches!(self, Database::Postgres(_))
    }

    /// Reads the password file again (SIGHUP): connections made from now on use it. Whether
    /// there is one.
    pub fn reload(&self, why: &str) -> bool {
        match self {
            Database::Postgres(postgres) if postgres.password_file.is_some() => {
                postgres.reload_password(why);
                true
            }
            _ => false,
        }
    }

    /// What the start line says of it.
    pub fn describe(&self) -> String {
        match self {
            Database::Memory => "member data is kept in this process only (no --database-url): \
                                 lost at a restart and not shared with other replicas"
                .to_owned(),
            Database::Postgres(postgres) => {
                format!("member data is kept in PostgreSQL at {}", postgres.target)
            }
        }
    }
}

/// The PostgreSQL pool and what it needs; see the module documentation.
pub struct Postgres {
    pool: Pool,
    /// How the pool connects, for a connection of its own (`with_own_connection`).
    config: tokio_postgres::Config,
    connector: Connector,
    timeout: Duration,
    /// Where it connects (host, port, database, user), never the password: for log lines.
    target: String,
    password: Arc<RwLock<Option<String>>>,
    password_file: Option<PathBuf>,
    /// The schema version found, and when it was last looked at while behind.
    schema: Mutex<SchemaState>,
    /// Operations refused because the database failed them (not the client's faults).
    failures: AtomicU64,
}

#[derive(Debug, Default)]
struct SchemaState {
    /// The version found by the last look, when it matched the release's.
    current: bool,
    /// The last look found it behind.
    behind: bool,
    /// Why the last look refused every operation (a schema behind, a role that could change
    /// the trail), given again until a second has passed.
    refusal: Option<String>,
    /// When it was last looked at: looked at again at most once a second while not current.
    looked: Option<Instant>,
}

impl fmt::Debug for Postgres {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Postgres")
            .field("target", &self.target)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Postgres {
    pub(crate) fn new(settings: &DatabaseSettings) -> Result<Postgres, String> {
        let (mut config, password, target) = parse_url(&settings.url)?;
        // A connection that cannot be made, or a peer gone silent, is noticed within the
        // deadline's order, not the kernel's quarter of an hour.
        config
            .connect_timeout(settings.timeout)
            .keepalives_idle(Duration::from_secs(10))
            .tcp_user_timeout(settings.timeout.max(Duration::from_secs(5)));
        // The server ends a statement that outlives the operation's deadline too.
        // A commit is durable before it is answered whatever the role's or the database's
        // settings say: a read's record must be on disk before its data leaves.
        config.options(format!(
            "-c synchronous_commit=on -c statement_timeout={} \
             -c idle_in_transaction_session_timeout={}",
            settings.timeout.as_millis(),
            settings.timeout.as_millis() * 2
        ));
        let password = match &settings.password_file {
            Some(path) => Some(read_password(path)?),
            None => password,
        };
        let password = Arc::new(RwLock::new(password));
        let connect = Connector {
            tls: tls_connector(settings.ca_file.as_ref())?,
            plain: config.get_ssl_mode() == tokio_postgres::config::SslMode::Disable,
            password: Arc::clone(&password),
        };
        let manager = Manager::from_connect(
            config.clone(),
            connect.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(settings.pool_size)
            .wait_timeout(Some(settings.timeout))
            .create_timeout(Some(settings.timeout))
            .recycle_timeout(Some(settings.timeout))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|error| format!("--database-url: {error}"))?;
        Ok(Postgres {
            pool,
            config,
            connector: connect,
            timeout: settings.timeout,
            target,
            password,
            password_file: settings.password_file.clone(),
            schema: Mutex::default(),
            failures: AtomicU64::new(0),
        })
    }

    /// Runs `operation` on a connection of the pool within the operation's deadline, once the
    /// schema is known to be current; a failure of the database (down, slow, refusing) is
    /// logged with its cause and answered 503 `service_unavailable`, while an error the
    /// operation decided (a 404, a 409) is its own answer.
    pub async fn run<R, F>(&self, what: &str, operation: F) -> Result<R, ApiError>
    where
        F: AsyncFnOnce(&mut Object) -> Result<R, Failure>,
    {
        let deadline = tokio::time::Instant::now() + self.timeout;
        let late = || format!("no answer within {} ms", self.timeout.as_millis());
        let mut client = match tokio::time::timeout_at(deadline, self.pool.get()).await {
            Ok(Ok(client)) => client,
            Ok(Err(error)) => {
                return Err(self.unavailable(what, &Failure::from_pool(error).cause()));
            }
            Err(_) => return Err(self.unavailable(what, &late())),
        };
        let done = tokio::time::timeout_at(deadline, async {
            self.check_schema(&client).await?;
            operation(&mut client).await
        })
        .await;
        let cause = match done {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(Failure::Answer(error))) => return Err(error),
            Ok(Err(Failure::Refused(cause))) => return Err(self.unavailable(what, &cause)),
            Ok(Err(Failure::Database(cause))) => cause,
            Err(_) => late(),
        };
        // A connection that failed or outlived the deadline is not trusted again: it may be
        // half-open (a failover, a partition) or still running the statement; it is closed,
        // never handed to the next request.
        drop(Object::take(client));
        Err(self.unavailable(what, &cause))
    }

    /// The 503 of an operation the database failed, logged and counted.
    fn unavailable(&self, what: &str, cause: &dyn fmt::Display) -> ApiError {
        self.failures.fetch_add(1, Ordering::Relaxed);
        log::warn!(
            "the database ({}) failed {what}: {cause}; answered 503",
            self.target
        );
        ApiError::unavailable(format!("the database failed {what}: {cause}"))
    }

    /// Refuses operations while the schema is behind the release's (looked at again at most
    /// once a second, so that `partner-api migrate` is taken without a restart).
    async fn check_schema(&self, client: &Client) -> Result<(), Failure> {
        {
            let mut state = self
                .schema
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if state.current {
                return Ok(());
            }
            if let Some(refusal) = &state.refusal
                && state
                    .looked
                    .is_some_and(|looked| looked.elapsed() < Duration::from_secs(1))
            {
                return Err(Failure::Refused(refusal.clone()));
            }
            state.looked = Some(Instant::now());
        }
        let found = migrations::version(client).await?;
        let wanted = migrations::LATEST;
        self.schema
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .behind = found < wanted;
        if found >= wanted {
            if let Some(power) = migrations::may_change_the_trail(client).await? {
                log::error!(
                    "the database role this replica connects as ({}) could change or remove \
                     audit records ({power}): member-data operations answer 503 until it \
                     connects as the role `partner-api migrate --service-role` granted",
                    self.target
                );
                return Err(self.refuse(format!(
                    "it connects as a role that could change the audit trail ({power})"
                )));
            }
            let mut state = self
                .schema
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            state.current = true;
            state.refusal = None;
            log::info!("the database's schema is at version {found} (this release needs {wanted})");
            return Ok(());
        }
        log::error!(
            "the database's schema is at version {found}, this release needs {wanted}: \
             member-data operations answer 503 until `partner-api migrate` has run"
        );
        Err(self.refuse(format!(
            "its schema is at version {found}, this release needs {wanted}"
        )))
    }

    /// A refusal of every operation, given again without asking for a second.
    fn refuse(&self, why: String) -> Failure {
        self.schema
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .refusal = Some(why.clone());
        Failure::Refused(why)
    }

    fn reload_password(&self, why: &str) {
        let Some(path) = &self.password_file else {
            return;
        };
        match read_password(path) {
            Ok(password) => {
                *self
                    .password
                    .write()
                    .unwrap_or_else(|poison| poison.into_inner()) = Some(password);
                log::info!("database password reloaded ({why}) from {}", path.display());
            }
            Err(error) => log::warn!("{error}; the password read before stays ({why})"),
        }
    }

    /// Runs `operation` on a connection of its own, made and closed on a thread of its own:
    /// what runs before the server does (seeding the example server's things) or instead
    /// of it (`partner-api migrate`, `partner-api audit export`), outside any request.
    pub fn with_own_connection<R, F>(&self, operation: F) -> Result<R, String>
    where
        R: Send,
        F: AsyncFnOnce(&mut Client) -> Result<R, Failure> + Send,
    {
        // Made on the thread that runs it: only the operation itself crosses.
        let run = async move || {
            let (mut client, connection) =
                deadpool_postgres::Connect::connect(&self.connector, &self.config)
                    .await
                    .map_err(|error| {
                        format!("cannot connect to {}: {}", self.target, cause(&error))
                    })?;
            // The operator's commands (a migration, an export) are not requests: no deadline
            // on their statements.
            let answer = match client
                .batch_execute(
                    "SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0",
                )
                .await
            {
                Ok(()) => operation(&mut client).await,
                Err(error) => Err(Failure::from(error)),
            };
            drop(client);
            // The connection ends once its client is gone.
            let _ = connection.await;
            answer.map_err(|failure| match failure {
                Failure::Answer(error) => error.to_string(),
                Failure::Database(cause) | Failure::Refused(cause) => {
                    format!("{}: {cause}", self.target)
                }
            })
        };
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|error| format!("a runtime for the database: {error}"))?
                        .block_on(run())
                })
                .join()
                .unwrap_or_else(|_| Err("the database's thread panicked".to_owned()))
        })
    }

    /// Where it connects, without the password: for messages.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Whether the last look at the schema found it behind the release's.
    pub fn schema_behind(&self) -> bool {
        self.schema
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .behind
    }

    /// Operations the database failed since the start.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }
}

/// Why an operation did not complete: the answer it decided (a 404, a 409, ...), or a failure
/// of the database, which the caller turns into a 503.
#[derive(Debug)]
pub enum Failure {
    Answer(ApiError),
    /// The connection failed, or its state is unknown: it is closed.
    Database(String),
    /// The database answered, refusing (a statement's error, a schema behind, a role that
    /// could change the trail): the connection is sound and goes back to the pool.
    Refused(String),
}

impl Failure {
    fn from_pool(error: deadpool_postgres::PoolError) -> Failure {
        Failure::Database(format!("no connection from the pool: {error}"))
    }

    /// What went wrong, for the log.
    fn cause(&self) -> String {
        match self {
            Failure::Answer(error) => error.to_string(),
            Failure::Database(cause) | Failure::Refused(cause) => cause.clone(),
        }
    }
}

impl From<tokio_postgres::Error> for Failure {
    fn from(error: tokio_postgres::Error) -> Failure {
        // An error the server sent leaves the connection in step; any other (a closed or
        // broken connection, a protocol fault) does not.
        match error.as_db_error() {
            Some(_) => Failure::Refused(cause(&error)),
            None => Failure::Database(cause(&error)),
        }
    }
}

/// What went wrong, in the server's own words when it said why (a timeout, a refused role, a
/// full disk), with its SQLSTATE.
pub fn cause(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => error.to_string(),
    }
}

impl From<ApiError> for Failure {
    fn from(error: ApiError) -> Failure {
        Failure::Answer(error)
    }
}

/// The URL's configuration, its password if it has one, and a description without it.
fn parse_url(url: &str) -> Result<(tokio_postgres::Config, Option<String>, String), String> {
    let mut config: tokio_postgres::Config = url.parse().map_err(|error| {
        format!("--database-url is not a PostgreSQL URL (postgres://user@host:port/db): {error}")
    })?;
    if config.get_hosts().is_empty() {
        return Err("--database-url names no host".to_owned());
    }
    let password = config
        .get_password()
        .map(|bytes| String::from_utf8_lossy(bytes).into_owned());
    let host = match &config.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(host) => host.clone(),
        tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let target = format!(
        "{host}:{port}/{} as {}",
        config.get_dbname().unwrap_or("-"),
        config.get_user().unwrap_or("-")
    );
    config.application_name("partner-api");
    // Member data never crosses a network in the clear by default: the driver's default,
    // `prefer`, would fall back to plain text when the server offers no TLS (or an attacker
    // on the path says it does not); without `sslmode=disable` in the URL, TLS is required
    // over TCP, and rustls checks the server's certificate and name. A Unix socket is local.
    let on_socket = config.get_hostaddrs().is_empty()
        && config
            .get_hosts()
            .iter()
            .all(|host| matches!(host, tokio_postgres::config::Host::Unix(_)));
    if config.get_ssl_mode() == tokio_postgres::config::SslMode::Prefer && !on_socket {
        config.ssl_mode(tokio_postgres::config::SslMode::Require);
    }
    Ok((config, password, target))
}

fn read_password(path: &PathBuf) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "--database-password-file {}: cannot read it: {error}",
            path.display()
        )
    })?;
    let text = text.trim_end_matches(['\n', '\r']).to_owned();
    if text.is_empty() {
        return Err(format!(
            "--database-password-file {}: the file is empty",
            path.display()
        ));
    }
    Ok(text)
}

/// TLS to the database: the CA file's certificates, or the public roots.
fn tls_connector(
    ca_file: Option<&PathBuf>,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        Some(path) => {
            let text = std::fs::read(path).map_err(|error| {
                format!(
                    "--database-ca-file {}: cannot read it: {error}",
                    path.display()
                )
            })?;
            let mut added = 0;
            for certificate in rustls::pki_types::pem::PemObject::pem_slice_iter(&text) {
                let certificate: rustls::pki_types::CertificateDer<'static> = certificate
                    .map_err(|error| format!("--database-ca-file {}: {error}", path.display()))?;
                roots
                    .add(certificate)
                    .map_err(|error| format!("--database-ca-file {}: {error}", path.display()))?;
                added += 1;
            }
            if added == 0 {
                return Err(format!(
                    "--database-ca-file {}: no certificate in it",
                    path.display()
                ));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

type ConnectFuture<'a> = Pin<
    Box<
        dyn Future<Output = Result<(Client, tokio::task::JoinHandle<()>), tokio_postgres::Error>>
            + Send
            + 'a,
    >,
>;

/// Makes the pool's connections: the password as last read, TLS unless the URL disables it.
#[derive(Clone)]
struct Connector {
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    plain: bool,
    password: Arc<RwLock<Option<String>>>,
}

impl deadpool_postgres::Connect for Connector {
    fn connect(&self, config: &tokio_postgres::Config) -> ConnectFuture<'_> {
        let mut config = config.clone();
        if let Some(password) = &*self
            .password
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
        {
            config.password(password.as_bytes());
        }
        let tls = self.tls.clone();
        let plain = self.plain;
        Box::pin(async move {
            if plain {
                spawned(config.connect(tokio_postgres::NoTls).await?)
            } else {
                spawned(config.connect(tls).await?)
            }
        })
    }
}

/// The client, its connection driven by a task of its own.
fn spawned<S, T>(
    (client, connection): (Client, tokio_postgres::Connection<S, T>),
) -> Result<(Client, tokio::task::JoinHandle<()>), tokio_postgres::Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let task = tokio::spawn(async move {
        if let Err(error) = connection.await {
            log::warn!("a database connection ended: {error}");
        }
    });
    Ok((client, task))
}

// The connector's TLS type is the one rustls makes for a plain socket.
const _: fn() = || {
    fn connects<T: MakeTlsConnect<Socket>>() {}
    connects::<tokio_postgres_rustls::MakeRustlsConnect>();
};

/// The database's metrics: whether member data is kept in PostgreSQL, whether its schema is
/// behind the release's, and the member-data operations it failed (each answered 503), which
/// page (`monitoring/`).
#[derive(Debug)]
pub struct DatabaseCollector(pub Database);

impl prometheus_client::collector::Collector for DatabaseCollector {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder,
    ) -> std::fmt::Result {
        use prometheus_client::encoding::NoLabelSet;
        use prometheus_client::metrics::MetricType;
        let postgres = match &self.0 {
            Database::Postgres(postgres) => Some(postgres),
            Database::Memory => None,
        };
        encoder
            .encode_descriptor(
                "partner_api_database_durable",
                "1 when member data is kept in PostgreSQL, shared by every replica; 0 when it \
                 is kept in this process only.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&i64::from(postgres.is_some()))?;
        encoder
            .encode_descriptor(
                "partner_api_database_schema_behind",
                "1 while the database's schema, as last read, is behind this release's: \
                 member-data operations answer 503 until `partner-api migrate` has run.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&i64::from(
                postgres.is_some_and(|postgres| postgres.schema_behind()),
            ))?;
        encoder
            .encode_descriptor(
                "partner_api_database_failures",
                "Member-data operations the database failed (down, slow, refusing, or behind \
                 the release's schema), each answered 503 service_unavailable with nothing \
                 read or changed.",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(
                &postgres.map_or(0, |postgres| postgres.failures()),
                None,
            )?;
        Ok(())
    }
}
