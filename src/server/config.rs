//! Configuration and the command line. Every setting is a flag and an environment variable
//! (flags win), with a default that works on a laptop; `partner-api --help` documents them.
//! Values are parsed into types that cannot hold bad ones, and a bad value stops the program
//! with one line naming the setting and exit code 2, before anything starts.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::uri::Uri;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::audit::sink::AuditTarget;
use crate::conventions::HeaderLimits;
use crate::edge::client::{ClientIpHeader, IpNetwork};
use crate::edge::tls::TlsProfile;
use crate::observability::log_sink::WhenStalled;
use crate::observability::logging::LogFormat;
use crate::rate_limit::redis_url::RedisUrl;
use crate::rate_limit::store_files::StoreFiles;
use crate::rate_limit::{Quota, RateLimitSettings, StoreSetting};

/// Exit code for a bad command line or setting.
pub const EXIT_BAD_CONFIG: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "partner-api",
    version,
    about = "The partner API of the training and lifestyle programme.",
    long_about = "The partner API of the training and lifestyle programme.\n\n\
                  Without a subcommand it serves the API. Every option can also be set through \
                  the environment variable named in its help; a flag wins over the variable."
)]
pub struct Cli {
    #[command(flatten)]
    pub server: ServerConfig,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Call GET /v1/ping on a running service; exit 0 when it answers 200 with pong true,
    /// else 1 with one line saying why. For container probes where no curl exists.
    Healthcheck(HealthcheckArgs),
    /// Print the OpenAPI document (YAML, or JSON with --json): exactly `openapi/v1.yaml`, or
    /// with --oas30 its OpenAPI 3.0.3 rendition, exactly `openapi/v1.oas30.yaml`.
    Openapi {
        /// Print JSON instead of YAML.
        #[arg(long)]
        json: bool,
        /// Print the OpenAPI 3.0.3 rendition, for generators that read 3.0 only.
        #[arg(long)]
        oas30: bool,
    },
    /// Issue, list and revoke partner keys in the key file every replica reads
    /// (--keys-file). Run it where the file is written; replicas read the change within
    /// --tls-watch-secs, or at once on SIGHUP.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Bring the database's schema (--database-url) up to this release's: the migrations not
    /// applied yet, in order, each once however many run at once. Run it as the schema's
    /// owner before the release's replicas start; they refuse member data (503) while the
    /// schema is behind.
    Migrate {
        /// The role the service connects as: granted what it needs and no more (no UPDATE or
        /// DELETE on the audit trail).
        #[arg(long, value_name = "ROLE")]
        service_role: Option<String>,
    },
    /// The audit trail kept in the database (--database-url).
    #[command(subcommand)]
    Audit(AuditCommand),
}

/// `partner-api audit ...`.
#[derive(Clone, Debug, Subcommand)]
pub enum AuditCommand {
    /// Write the records since a time, oldest first, one JSON object a line, to standard
    /// output: for a partner's or an auditor's request.
    Export {
        /// The first time included, RFC 3339 (2026-11-01T00:00:00Z).
        #[arg(long, value_name = "TIME")]
        since: jiff::Timestamp,
        /// The first time no longer included; without it, a minute before the database's
        /// now (a later export from there misses nothing).
        #[arg(long, value_name = "TIME")]
        until: Option<jiff::Timestamp>,
        /// Only the records of this partner's keys.
        #[arg(long, value_name = "ID")]
        partner: Option<String>,
    },
}

/// `partner-api keys ...`.
#[derive(Clone, Debug, Subcommand)]
pub enum KeysCommand {
    /// Issue a key: its record goes into the key file (created if absent), the key itself to
    /// standard output, once. Give it to the partner now: only its digest is kept. The file
    /// keeps its owner, group and mode; one its group could not read is refused.
    Issue {
        /// The key file.
        #[arg(long, env = "PARTNER_API_KEYS_FILE", value_name = "PATH")]
        keys_file: PathBuf,
        /// The partner's id as their agreement names it (pt_ and letters and digits).
        #[arg(long, value_name = "ID")]
        partner: String,
        /// What the key may do (things:read); repeat for more.
        #[arg(long = "scope", value_name = "SCOPE", required = true)]
        scopes: Vec<String>,
        /// The day the key stops working, at its start (UTC), YYYY-MM-DD.
        #[arg(long, value_name = "DATE")]
        expires: Option<String>,
        /// The group the key file is given, a name or a number: the one the service reads it
        /// through (systemd's SupplementaryGroups=). Without it the file keeps its group (a new
        /// one gets the runner's).
        #[arg(long, value_name = "GROUP")]
        group: Option<String>,
        /// A test key (pak_test_...): it reaches only test data, never a member's, so it may be
        /// given before any agreement.
        #[arg(long)]
        test: bool,
    },
    /// List the keys of the key file: id, partner, scopes, dates and state (never a key).
    List {
        #[arg(long, env = "PARTNER_API_KEYS_FILE", value_name = "PATH")]
        keys_file: PathBuf,
    },
    /// Revoke a key by its id (ky_...).
    Revoke {
        #[arg(long, env = "PARTNER_API_KEYS_FILE", value_name = "PATH")]
        keys_file: PathBuf,
        /// The key's id.
        #[arg(value_name = "KEY_ID")]
        id: String,
        /// The group the key file is given, as for `keys issue --group`.
        #[arg(long, value_name = "GROUP")]
        group: Option<String>,
    },
}

/// Settings of the server.
#[derive(Clone, Debug, Args)]
pub struct ServerConfig {
    /// Address and port to listen on (IP:PORT; use 0.0.0.0 or [::] to listen on all interfaces).
    #[arg(
        long,
        env = "PARTNER_API_BIND",
        default_value = "127.0.0.1:8080",
        value_name = "ADDR"
    )]
    pub bind: SocketAddr,

    /// Where partners reach the service: its public origin and optional path prefix, e.g.
    /// https://api.example.com. `doc_url` in error bodies points into it and the served OpenAPI
    /// documents, their code samples and the changelog feed name it. Set it wherever partners
    /// reach the service by another name (behind a proxy or balancer, or listening on 0.0.0.0
    /// or [::]). Default: the listener's own origin, a wildcard address named by its loopback
    /// address (http://127.0.0.1:8080); never the Host a client sent. `--docs-base-url` is its
    /// former name.
    #[arg(long, alias = "docs-base-url", env = "PARTNER_API_PUBLIC_URL", value_name = "URL",
          value_parser = parse_base_url)]
    pub public_url: Option<BaseUrl>,

    /// Worker threads, 1 to 256. Default: the number of CPUs this process may run on.
    #[arg(long, env = "PARTNER_API_WORKERS", value_name = "N", value_parser = parse_workers)]
    pub workers: Option<NonZeroUsize>,

    /// Address and port of the admin listener (/livez, /readyz, /metrics), or `off`. Never the
    /// API's address: partners must not reach it.
    #[arg(long, env = "PARTNER_API_ADMIN_BIND", default_value = "127.0.0.1:8081",
          value_name = "ADDR|off", value_parser = parse_admin_bind)]
    pub admin_bind: AdminBind,

    /// Log line format: `text` for people, `json` (one object a line) for a log pipeline.
    #[arg(
        long,
        env = "PARTNER_API_LOG_FORMAT",
        default_value = "text",
        value_name = "FORMAT"
    )]
    pub log_format: LogFormat,

    /// When the log sink (stderr's reader) stalls and the log queue is full: `drop` new lines
    /// and count them (requests never wait), or `wait` for the sink (no line is lost; requests
    /// stall with the sink).
    #[arg(
        long,
        env = "PARTNER_API_LOG_WHEN_STALLED",
        default_value = "drop",
        value_name = "drop|wait"
    )]
    pub log_when_stalled: WhenStalled,

    /// Seconds the service keeps serving after SIGTERM or SIGINT, with /readyz answering 503,
    /// before it stops accepting (so load balancers stop sending first); 0 stops at once. A
    /// second signal skips the rest of the delay.
    #[arg(long, env = "PARTNER_API_SHUTDOWN_DELAY_SECS", default_value_t = 5, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub shutdown_delay_secs: u64,

    /// Seconds that in-flight requests get to finish after SIGTERM or SIGINT (at most an hour).
    #[arg(long, env = "PARTNER_API_SHUTDOWN_GRACE_SECS", default_value_t = 30, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub shutdown_grace_secs: u64,

    /// Seconds an API worker may make no progress (its thread blocked) before /livez and
    /// /readyz answer 503 naming it. Well above any request's work (milliseconds) and below
    /// Kubernetes' default liveness budget (three probes ten seconds apart).
    #[arg(long, env = "PARTNER_API_WATCHDOG_SECS", default_value_t = 10, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub watchdog_secs: u64,

    /// Largest request body accepted, in bytes; larger ones get 413 payload_too_large.
    #[arg(long, env = "PARTNER_API_MAX_BODY_BYTES", default_value_t = 64 * 1024, value_name = "BYTES",
          value_parser = clap::value_parser!(u32).range(1..=16 * 1024 * 1024))]
    pub max_body_bytes: u32,

    /// Seconds an idle keep-alive connection stays open (0 closes after each response; at most
    /// an hour).
    #[arg(long, env = "PARTNER_API_KEEP_ALIVE_SECS", default_value_t = 5, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub keep_alive_secs: u64,

    /// Milliseconds a client has to send a complete request head before the connection is
    /// closed (guards against slow clients holding connections; at most ten minutes).
    #[arg(long, env = "PARTNER_API_REQUEST_HEAD_TIMEOUT_MS", default_value_t = 5000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub request_head_timeout_ms: u64,

    /// Seconds a request body may make no progress: once the handler waits for the next piece
    /// of the body and none arrives in this time, the request is answered 408 request_timeout
    /// and its connection closed. nginx's client_body_timeout is 60 s; 10 s is ample for any
    /// body this API takes (64 KiB by default) on a connection that works at all, and short
    /// enough that a stalled client holds nothing for long.
    #[arg(long, env = "PARTNER_API_BODY_TIMEOUT_SECS", default_value_t = 10, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub body_timeout_secs: u64,

    /// Seconds a response may wait for the client to read it (HTTP/1.1: the socket accepts no
    /// byte; HTTP/2: the client opens no window) before its connection (HTTP/1.1) or stream
    /// (HTTP/2) is ended. Measured from the last progress, like nginx's send_timeout (60 s):
    /// 30 s covers a phone on a poor network, and bounds what a client that never reads holds.
    #[arg(long, env = "PARTNER_API_SEND_TIMEOUT_SECS", default_value_t = 30, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub send_timeout_secs: u64,

    /// Seconds an HTTP/2 connection with no stream open stays open when --keep-alive-secs is 0
    /// (HTTP/1.1 then closes after each response; an HTTP/2 connection cannot, and without this
    /// one that sent only its preface was never closed).
    #[arg(long, env = "PARTNER_API_H2_IDLE_SECS", default_value_t = 5, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub h2_idle_secs: u64,

    /// Requests one client may have in flight at once in this process (from its head to the
    /// last byte of its answer); more are refused with 429 rate_limited. Default: the API burst
    /// (--rate-limit-burst, 50): a client sending its whole burst at once is never refused by
    /// it, while one address can no longer hold the descriptors and memory every other client
    /// needs (three such clients hold 150, well inside even a 256-descriptor limit).
    #[arg(long, env = "PARTNER_API_MAX_IN_FLIGHT_PER_CLIENT", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_in_flight_per_client: Option<u32>,

    /// Connections one peer address (an IPv4 address or IPv6 /64; the trusted proxies excepted)
    /// may hold open at once in this process; a further one is closed as soon as it is
    /// accepted. Unset, there is no such ceiling: one address may open hundreds of connections
    /// and be served on each (within its rate limit and --max-in-flight-per-client). Set it
    /// where clients reach the service directly (the API burst is a sound value), so that an
    /// address opening connections and sending nothing (each held until the head deadline)
    /// cannot take the descriptors others need.
    #[arg(long, env = "PARTNER_API_MAX_CONNECTIONS_PER_CLIENT", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections_per_client: Option<u32>,

    /// Header fields a request head may have, over HTTP/1.1 and HTTP/2 alike; more get 431
    /// request_header_too_large. HTTP/1.1's parser refuses more than 96 by itself.
    #[arg(long, env = "PARTNER_API_MAX_HEADER_FIELDS", default_value_t = 96, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=96))]
    pub max_header_fields: u32,

    /// Bytes a request's header fields may take, counted as HTTP/2 counts them (each field's
    /// name and value plus 32), over HTTP/1.1 and HTTP/2 alike; announced to HTTP/2 clients as
    /// SETTINGS_MAX_HEADER_LIST_SIZE. More get 431. HTTP/1.1's parser refuses a head over
    /// 128 KiB by itself.
    #[arg(long, env = "PARTNER_API_MAX_HEADER_BYTES", default_value_t = 128 * 1024, value_name = "BYTES",
          value_parser = clap::value_parser!(u32).range(1024..=128 * 1024))]
    pub max_header_bytes: u32,

    /// Streams one HTTP/2 connection may have open at once (nginx's default); announced in
    /// SETTINGS, and streams beyond it are refused with REFUSED_STREAM.
    #[arg(long, env = "PARTNER_API_H2_MAX_CONCURRENT_STREAMS", default_value_t = 128, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub h2_max_concurrent_streams: u32,

    /// Milliseconds a client has to complete the TLS handshake before the connection is closed.
    #[arg(long, env = "PARTNER_API_TLS_HANDSHAKE_TIMEOUT_MS", default_value_t = 3000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub tls_handshake_timeout_ms: u64,

    /// Sustained requests per second each client may send to the API (/v1).
    #[arg(long, env = "PARTNER_API_RATE_LIMIT_PER_SECOND", default_value_t = 10, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub rate_limit_per_second: u32,

    /// Requests a client may send to the API at once before the sustained rate applies.
    #[arg(long, env = "PARTNER_API_RATE_LIMIT_BURST", default_value_t = 50, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub rate_limit_burst: u32,

    /// Sustained requests per second each client may send outside the API (reference, documents).
    #[arg(long, env = "PARTNER_API_DOCS_RATE_LIMIT_PER_SECOND", default_value_t = 50, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub docs_rate_limit_per_second: u32,

    /// Burst allowed outside the API (a browser loading the reference fetches a dozen files).
    #[arg(long, env = "PARTNER_API_DOCS_RATE_LIMIT_BURST", default_value_t = 200, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub docs_rate_limit_burst: u32,

    /// Switch rate limiting off (for local work only): no 429s and no quota headers.
    #[arg(long, env = "PARTNER_API_RATE_LIMIT_OFF")]
    pub rate_limit_off: bool,

    /// Where the limits are counted: `memory` (in this process; each replica counts for
    /// itself) or a Redis URL (redis://host:port/db, rediss:// for TLS) shared by every replica.
    #[arg(long, env = "PARTNER_API_RATE_LIMIT_STORE", default_value = "memory",
          value_name = "memory|URL", value_parser = parse_store)]
    pub rate_limit_store: StoreArg,

    /// Milliseconds a decision waits for the shared store before the in-process limiter
    /// decides instead. 20: a margin over what calls to a store on saturated cores kept to
    /// (BENCHMARKS.md, "The shared store's budget"), and a request held for all of it still
    /// meets the 25 ms latency objective.
    #[arg(long, env = "PARTNER_API_RATE_LIMIT_STORE_TIMEOUT_MS", default_value_t = 20, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub rate_limit_store_timeout_ms: u64,

    /// Password of the shared store, when its URL has none. Set it through the environment
    /// variable only: it is never printed or logged.
    #[arg(
        long,
        env = "PARTNER_API_REDIS_PASSWORD",
        value_name = "PASSWORD",
        hide_env_values = true
    )]
    pub redis_password: Option<Secret>,

    /// File holding the shared store's URL (e.g. a mounted Secret), instead of
    /// --rate-limit-store; read again on SIGHUP and when it changes.
    #[arg(
        long,
        env = "PARTNER_API_REDIS_URL_FILE",
        value_name = "PATH",
        conflicts_with = "rate_limit_store"
    )]
    pub redis_url_file: Option<PathBuf>,

    /// File holding the shared store's password, instead of --redis-password; read again on
    /// SIGHUP and when it changes, so a rotated password needs no restart.
    #[arg(
        long,
        env = "PARTNER_API_REDIS_PASSWORD_FILE",
        value_name = "PATH",
        conflicts_with = "redis_password"
    )]
    pub redis_password_file: Option<PathBuf>,

    /// The file of partner keys issued (`partner-api keys issue`): the same file in every
    /// replica; read again when it changes (every --tls-watch-secs) and on SIGHUP. Without it,
    /// no key is in force and every operation that needs one answers 401.
    #[arg(long, env = "PARTNER_API_KEYS_FILE", value_name = "PATH")]
    pub keys_file: Option<PathBuf>,

    /// Where the audit trail of requests for member data goes, as JSON lines: - for standard
    /// output (the operational log is on standard error), or a file to append to.
    #[arg(
        long,
        env = "PARTNER_API_AUDIT_LOG",
        value_name = "PATH",
        default_value = "-"
    )]
    pub audit_log: AuditTarget,

    /// Where member data is kept: a PostgreSQL URL (postgres://partner_api@host:5432/partner_api;
    /// TLS unless it says sslmode=disable), shared by every replica. Without it member data is
    /// kept in this process only: lost at a restart and not shared with other replicas. Set it
    /// through the environment variable when it holds a password: it is never printed or
    /// logged.
    #[arg(
        long,
        env = "PARTNER_API_DATABASE_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub database_url: Option<Secret>,

    /// File holding the database password, instead of one in --database-url; read again on
    /// SIGHUP, for the connections made after, so a rotated password needs no restart.
    #[arg(long, env = "PARTNER_API_DATABASE_PASSWORD_FILE", value_name = "PATH")]
    pub database_password_file: Option<PathBuf>,

    /// PEM file of the certificates the database's own is checked against (its CA); without
    /// it, the public roots.
    #[arg(long, env = "PARTNER_API_DATABASE_CA_FILE", value_name = "PATH")]
    pub database_ca_file: Option<PathBuf>,

    /// Connections to the database this replica holds at most, all workers together.
    #[arg(long, env = "PARTNER_API_DATABASE_POOL_SIZE", default_value_t = 16, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub database_pool_size: u32,

    /// Milliseconds one member-data operation may take in the database, waiting for a
    /// connection and connecting included (the server ends a statement past it too): a
    /// database down or slow costs a request a 503 within it, never a hang.
    #[arg(long, env = "PARTNER_API_DATABASE_TIMEOUT_MS", default_value_t = 1_000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(10..=30_000))]
    pub database_timeout_ms: u64,

    /// Seconds between two prunings of the limiter's state of quiet clients.
    #[arg(long, env = "PARTNER_API_RATE_LIMIT_PRUNE_SECS", default_value_t = 60, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub rate_limit_prune_secs: u64,

    /// Proxies (IP addresses or CIDR networks, comma-separated) whose --client-ip-header names
    /// the client. From any other peer it is ignored.
    #[arg(
        long,
        env = "PARTNER_API_TRUSTED_PROXIES",
        value_name = "CIDRS",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<IpNetwork>,

    /// The one header the trusted proxies write the client's address into: `x-forwarded-for`
    /// (HAProxy's `option forwardfor`, nginx's `$proxy_add_x_forwarded_for`, cloud load
    /// balancers) or `forwarded` (RFC 7239). The other header is ignored, whoever sent it.
    #[arg(
        long,
        env = "PARTNER_API_CLIENT_IP_HEADER",
        default_value = "x-forwarded-for",
        value_name = "HEADER"
    )]
    pub client_ip_header: ClientIpHeader,

    /// PEM certificate chain; with --tls-key the service speaks HTTPS (TLS 1.2/1.3, HTTP/2).
    #[arg(
        long,
        env = "PARTNER_API_TLS_CERT",
        value_name = "PATH",
        requires = "tls_key"
    )]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key (PKCS#8, PKCS#1 or SEC1) of --tls-cert.
    #[arg(
        long,
        env = "PARTNER_API_TLS_KEY",
        value_name = "PATH",
        requires = "tls_cert"
    )]
    pub tls_key: Option<PathBuf>,

    /// Which TLS versions are spoken, after Mozilla's profiles: `intermediate` (TLS 1.3 and 1.2,
    /// for older clients) or `modern` (TLS 1.3 only). Either offers the post-quantum hybrid
    /// key exchange X25519MLKEM768 first.
    #[arg(
        long,
        env = "PARTNER_API_TLS_PROFILE",
        default_value = "intermediate",
        value_name = "PROFILE"
    )]
    pub tls_profile: TlsProfile,

    /// Seconds between checks of the certificate files, the shared store's credential files
    /// and the key file, for changes (0: reload on SIGHUP only; at most a day).
    #[arg(long, env = "PARTNER_API_TLS_WATCH_SECS", default_value_t = 5, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub tls_watch_secs: u64,

    /// max-age of Strict-Transport-Security on HTTPS responses (0 leaves the header out; at
    /// most ten years).
    #[arg(long, env = "PARTNER_API_HSTS_MAX_AGE_SECS", default_value_t = 63_072_000, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(0..=315_360_000))]
    pub hsts_max_age_secs: u64,
}

impl ServerConfig {
    pub fn worker_count(&self) -> usize {
        self.workers
            .map(NonZeroUsize::get)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
    }

    pub fn keep_alive(&self) -> Option<Duration> {
        (self.keep_alive_secs > 0).then(|| Duration::from_secs(self.keep_alive_secs))
    }

    /// The header limits every request is held to, on both protocols.
    pub fn header_limits(&self) -> HeaderLimits {
        HeaderLimits {
            fields: self.max_header_fields as usize,
            bytes: self.max_header_bytes as usize,
        }
    }

    pub fn request_head_timeout(&self) -> Duration {
        Duration::from_millis(self.request_head_timeout_ms)
    }

    /// Requests one client may have in flight: the setting, or the API burst.
    pub fn max_in_flight_per_client(&self) -> u32 {
        self.max_in_flight_per_client
            .unwrap_or(self.rate_limit_burst)
    }

    /// Connections one peer address may hold, when a ceiling is set.
    pub fn max_connections_per_client(&self) -> Option<u32> {
        self.max_connections_per_client
    }

    pub fn body_timeout(&self) -> Duration {
        Duration::from_secs(self.body_timeout_secs)
    }

    pub fn send_timeout(&self) -> Duration {
        Duration::from_secs(self.send_timeout_secs)
    }

    /// How long an HTTP/2 connection without streams stays open: the keep-alive time, or
    /// `--h2-idle-secs` when keep-alive is off.
    pub fn h2_idle(&self) -> Duration {
        self.keep_alive()
            .unwrap_or_else(|| Duration::from_secs(self.h2_idle_secs))
    }

    /// The limits, or `None` when limiting is switched off.
    pub fn rate_limits(&self) -> Option<RateLimitSettings> {
        (!self.rate_limit_off).then_some(RateLimitSettings {
            api: Quota {
                per_second: self.rate_limit_per_second,
                burst: self.rate_limit_burst,
            },
            docs: Quota {
                per_second: self.docs_rate_limit_per_second,
                burst: self.docs_rate_limit_burst,
            },
        })
    }
}

impl ServerConfig {
    /// What the `--database-*` settings say; `None` without `--database-url`.
    pub fn database(&self) -> Option<crate::database::DatabaseSettings> {
        let url = self.database_url.as_ref()?;
        Some(crate::database::DatabaseSettings {
            url: url.0.clone(),
            password_file: self.database_password_file.clone(),
            ca_file: self.database_ca_file.clone(),
            pool_size: self.database_pool_size as usize,
            timeout: Duration::from_millis(self.database_timeout_ms),
        })
    }

    /// Where the limits are counted: a Redis URL, given or read from its file, gets the
    /// password (given or read from its file) when it has none of its own. The error names
    /// the setting whose file cannot be used.
    pub fn rate_limit_store(&self) -> Result<StoreSetting, String> {
        let files = StoreFiles {
            url: self.rate_limit_store.0.clone(),
            password: self.redis_password.as_ref().map(|secret| secret.0.clone()),
            url_file: self.redis_url_file.clone(),
            password_file: self.redis_password_file.clone(),
        };
        Ok(match files.read()? {
            None => StoreSetting::Memory,
            Some(credentials) => StoreSetting::Redis {
                credentials,
                files,
                budget: Duration::from_millis(self.rate_limit_store_timeout_ms),
            },
        })
    }
}

impl Default for ServerConfig {
    /// The defaults of the command line, for tests and embedding.
    fn default() -> Self {
        Cli::try_parse_from(["partner-api"])
            .expect("the defaults parse")
            .server
    }
}

/// Arguments of `partner-api healthcheck`.
#[derive(Clone, Debug, Args)]
pub struct HealthcheckArgs {
    /// The service's base URL (http://HOST:PORT, to which /v1/ping is added) or the ping's
    /// own URL (http://HOST:PORT/v1/ping). Default: the configured bind address.
    #[arg(long, value_name = "URL", value_parser = parse_base_url)]
    pub url: Option<BaseUrl>,

    /// Seconds to wait for the whole answer.
    #[arg(long, default_value_t = 5.0, value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: f64,

    /// For https: trust the CA certificate(s) in this PEM file instead of the public roots.
    #[arg(long, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,

    /// For https to a loopback host (localhost, 127.0.0.1, ::1): do not verify the certificate.
    #[arg(long, conflicts_with = "ca_file")]
    pub insecure_localhost: bool,
}

/// `--rate-limit-store`: `None` for `memory`.
#[derive(Clone, Debug)]
pub struct StoreArg(pub Option<RedisUrl>);

fn parse_store(input: &str) -> Result<StoreArg, String> {
    if input.eq_ignore_ascii_case("memory") {
        return Ok(StoreArg(None));
    }
    RedisUrl::parse(input).map(|url| StoreArg(Some(url)))
}

/// A value that is never shown: its `Debug` says only that it is set.
#[derive(Clone)]
pub struct Secret(String);

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        Ok(Secret(input.to_owned()))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Where the admin listener listens, or `None` for `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdminBind(pub Option<SocketAddr>);

fn parse_admin_bind(input: &str) -> Result<AdminBind, String> {
    if input.eq_ignore_ascii_case("off") {
        return Ok(AdminBind(None));
    }
    input
        .parse()
        .map(|addr| AdminBind(Some(addr)))
        .map_err(|_| "expected IP:PORT (e.g. 127.0.0.1:8081) or off".to_owned())
}

/// An absolute http(s) URL without query, fragment or trailing slash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl(Arc<str>);

impl BaseUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_shared(self) -> Arc<str> {
        self.0
    }
}

fn parse_base_url(input: &str) -> Result<BaseUrl, String> {
    let uri: Uri = input
        .parse()
        .map_err(|_| "not a URL (expected e.g. https://api.example.com)".to_owned())?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err("the URL must start with http:// or https://".to_owned()),
    }
    if uri
        .authority()
        .is_none_or(|authority| authority.host().is_empty())
    {
        return Err("the URL has no host".to_owned());
    }
    if uri.query().is_some() || input.contains('#') {
        return Err("the URL must not have a query or a fragment".to_owned());
    }
    // It is published: in every error body and in documents any origin may read.
    if uri
        .authority()
        .is_some_and(|authority| authority.as_str().contains('@'))
    {
        return Err("the URL must not carry a user name or password".to_owned());
    }
    Ok(BaseUrl(Arc::from(input.trim_end_matches('/'))))
}

/// The placeholder the shipped configurations (the systemd environment file, the
/// Containerfile, the Kubernetes manifests) set `PARTNER_API_PUBLIC_URL` to, for the operator
/// to replace: a name under `.invalid` never resolves (RFC 6761), so a service started with
/// one would hand partners links to nowhere.
pub const PUBLIC_URL_PLACEHOLDER: &str = "https://partner-api.example.invalid";

/// Whether `url` names a host under `.invalid` (a trailing dot or capitals change nothing).
fn is_placeholder(url: &BaseUrl) -> bool {
    let host = url
        .as_str()
        .parse::<Uri>()
        .ok()
        .and_then(|uri| Some(uri.host()?.trim_end_matches('.').to_ascii_lowercase()));
    host.is_some_and(|host| host == "invalid" || host.ends_with(".invalid"))
}

/// Worker threads: a bound, since each holds a thread, a runtime and connections of its own.
fn parse_workers(input: &str) -> Result<NonZeroUsize, String> {
    match input.parse::<usize>() {
        Ok(workers @ 1..=256) => Ok(NonZeroUsize::new(workers).expect("1 or more")),
        _ => Err("expected a number of worker threads from 1 to 256".to_owned()),
    }
}

fn parse_timeout(input: &str) -> Result<f64, String> {
    match input.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 3600.0 => Ok(secs),
        _ => Err("expected a number of seconds between 0 and 3600".to_owned()),
    }
}

impl Cli {
    /// Parses the command line and environment. Help and version are printed and exit 0; any
    /// error is printed as one line naming the setting, and exits with [`EXIT_BAD_CONFIG`].
    pub fn parse_or_exit() -> Cli {
        match Cli::try_parse() {
            Ok(mut cli) => {
                // Only the server reads the public URL; a probe need not say so each time.
                if cli.command.is_none() {
                    cli.server.read_former_names();
                    let checked = cli
                        .server
                        .check_public_url()
                        .and_then(|()| cli.server.check_listeners());
                    if let Err(message) = checked {
                        eprintln!("error: {message}");
                        std::process::exit(EXIT_BAD_CONFIG.into());
                    }
                }
                cli
            }
            Err(error) => match error.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => error.exit(),
                _ => {
                    eprintln!("{}", one_line_error(&error));
                    std::process::exit(EXIT_BAD_CONFIG.into());
                }
            },
        }
    }
}

/// `PARTNER_API_PUBLIC_URL`'s former name, still read so that a deployment written for it keeps
/// its `doc_url`s and documents pointing at the public address.
const FORMER_PUBLIC_URL: &str = "PARTNER_API_DOCS_BASE_URL";

impl ServerConfig {
    /// Adopts a setting given under its former environment name (a flag's former name is a
    /// clap alias), saying so on stderr; a bad value is refused like any bad setting.
    fn read_former_names(&mut self) {
        // Empty counts as unset, as an orchestrator writes a variable it means to clear.
        let Some(value) = std::env::var_os(FORMER_PUBLIC_URL).filter(|value| !value.is_empty())
        else {
            return;
        };
        // The shipped configurations' placeholder stands for "not set yet": a deployment that
        // sets the former name over the image's placeholder keeps working.
        if self
            .public_url
            .as_ref()
            .is_some_and(|url| !is_placeholder(url))
        {
            eprintln!(
                "warning: {FORMER_PUBLIC_URL} is ignored: PARTNER_API_PUBLIC_URL (--public-url), \
                 its new name, is set"
            );
            return;
        }
        match value.to_str().map(parse_base_url) {
            Some(Ok(url)) => {
                eprintln!(
                    "warning: {FORMER_PUBLIC_URL} is read as PARTNER_API_PUBLIC_URL, its new \
                     name; rename it"
                );
                self.public_url = Some(url);
            }
            Some(Err(reason)) => {
                eprintln!("error: invalid value for {FORMER_PUBLIC_URL}: {reason}");
                std::process::exit(EXIT_BAD_CONFIG.into());
            }
            None => {
                eprintln!("error: invalid value for {FORMER_PUBLIC_URL}: not text");
                std::process::exit(EXIT_BAD_CONFIG.into());
            }
        }
    }
}

impl ServerConfig {
    /// The server refuses the shipped configurations' placeholder ([`PUBLIC_URL_PLACEHOLDER`],
    /// or any name under `.invalid`), naming what to set; the other commands never read the
    /// public URL, so a probe or `keys issue` in a container that still has it works.
    fn check_public_url(&self) -> Result<(), String> {
        match &self.public_url {
            Some(url) if is_placeholder(url) => Err(format!(
                "--public-url (PARTNER_API_PUBLIC_URL) {} is a placeholder (a name under \
                 .invalid never resolves): set it to the URL partners use, e.g. \
                 https://api.example.com",
                url.as_str()
            )),
            _ => Ok(()),
        }
    }

    /// The admin listener needs an address of its own: on the API's port, where the two
    /// addresses overlap, the second bind would fail with "Address already in use", which
    /// names neither setting.
    fn check_listeners(&self) -> Result<(), String> {
        let (api, Some(admin)) = (self.bind, self.admin_bind.0) else {
            return Ok(());
        };
        if binds_overlap(api, admin) {
            return Err(format!(
                "--admin-bind {admin} (setting PARTNER_API_ADMIN_BIND) takes the port of \
                 --bind {api} (setting PARTNER_API_BIND): give the admin listener a port of its \
                 own, or `off`"
            ));
        }
        Ok(())
    }
}

/// Whether two listeners on these addresses cannot both bind: the same port (not 0, which
/// picks a free one) on the same address, an IPv4-mapped IPv6 address being its IPv4 one, or
/// with a wildcard that covers the other: `0.0.0.0` every IPv4 address, `::` every address of
/// both families (the listeners are dual-stack).
fn binds_overlap(first: SocketAddr, second: SocketAddr) -> bool {
    if first.port() != second.port() || first.port() == 0 {
        return false;
    }
    let (a, b) = (first.ip().to_canonical(), second.ip().to_canonical());
    let covers = |wildcard: IpAddr, other: IpAddr| match wildcard {
        IpAddr::V6(v6) => v6.is_unspecified(),
        IpAddr::V4(v4) => v4.is_unspecified() && other.is_ipv4(),
    };
    a == b || covers(a, b) || covers(b, a)
}

/// clap's error as one line, naming the environment variable as well as the flag, since a
/// bad value in a container usually comes from the environment.
fn one_line_error(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let first_line = rendered
        .lines()
        .next()
        .unwrap_or("error: invalid command line");
    let mut command = Cli::command();
    command.build();
    let env_of = |arg: &str| {
        std::iter::once(&command)
            .chain(command.get_subcommands())
            .flat_map(|command| command.get_arguments())
            .find(|candidate| candidate.to_string() == arg)
            .and_then(|candidate| candidate.get_env())
            .map(|env| env.to_string_lossy().into_owned())
    };
    // A setting that goes with another (--tls-cert and --tls-key): clap names the missing one
    // on a line of its own, which the first line leaves out.
    if let Some(ContextValue::Strings(missing)) = error.get(ContextKind::InvalidArg)
        && error.kind() == ErrorKind::MissingRequiredArgument
    {
        let named: Vec<String> = missing
            .iter()
            .map(|arg| match env_of(arg) {
                Some(env) => format!("{arg} (setting {env})"),
                None => arg.clone(),
            })
            .collect();
        return format!(
            "error: missing {}, which a setting given needs (see --help)",
            named.join(", ")
        );
    }
    let env_name = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => env_of(arg),
        _ => None,
    };
    match env_name {
        Some(env) => format!("{first_line} (setting {env})"),
        None => format!("{first_line} (see --help)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_work_on_a_laptop() {
        let config = ServerConfig::default();
        assert_eq!(config.bind, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(config.max_body_bytes, 65536);
        assert_eq!(config.shutdown_grace_secs, 30);
        assert!(config.worker_count() >= 1);
        assert_eq!(config.public_url, None);
        assert_eq!(
            config.rate_limits(),
            Some(RateLimitSettings {
                api: Quota {
                    per_second: 10,
                    burst: 50
                },
                docs: Quota {
                    per_second: 50,
                    burst: 200
                },
            })
        );
        assert!(config.trusted_proxies.is_empty());
        assert_eq!(
            config.admin_bind,
            AdminBind(Some("127.0.0.1:8081".parse().unwrap()))
        );
        assert_eq!(config.shutdown_delay_secs, 5);
        assert_eq!(config.log_format, LogFormat::Text);
        assert!(matches!(
            config.rate_limit_store(),
            Ok(StoreSetting::Memory)
        ));
    }

    #[test]
    fn overlapping_listeners_are_told_apart_from_neighbours() {
        let overlap = |a: &str, b: &str| binds_overlap(a.parse().unwrap(), b.parse().unwrap());
        for (a, b) in [
            ("127.0.0.1:8080", "127.0.0.1:8080"),
            ("0.0.0.0:8080", "127.0.0.1:8080"),
            ("[::]:8080", "127.0.0.1:8080"),
            ("[::]:8080", "[::1]:8080"),
            ("127.0.0.1:8080", "[::ffff:127.0.0.1]:8080"),
            ("0.0.0.0:8080", "[::ffff:0.0.0.0]:8080"),
            ("0.0.0.0:8080", "[::ffff:10.0.0.1]:8080"),
        ] {
            assert!(overlap(a, b) && overlap(b, a), "{a} {b}");
        }
        for (a, b) in [
            ("127.0.0.1:8080", "127.0.0.1:8081"),
            ("0.0.0.0:8080", "[::1]:8080"),
            ("127.0.0.1:8080", "127.0.0.2:8080"),
            ("127.0.0.1:0", "127.0.0.1:0"),
        ] {
            assert!(!overlap(a, b) && !overlap(b, a), "{a} {b}");
        }
    }

    #[test]
    fn the_store_is_memory_or_a_redis_url_and_a_bad_one_is_named() {
        let cli = Cli::try_parse_from([
            "partner-api",
            "--rate-limit-store",
            "redis://127.0.0.1:6390/1",
            "--rate-limit-store-timeout-ms",
            "15",
        ])
        .unwrap();
        match cli.server.rate_limit_store() {
            Ok(StoreSetting::Redis {
                credentials,
                budget,
                ..
            }) => {
                assert_eq!(credentials.url.to_string(), "redis://127.0.0.1:6390/1");
                assert_eq!(budget, Duration::from_millis(15));
            }
            other => panic!("{other:?}"),
        }
        let error =
            Cli::try_parse_from(["partner-api", "--rate-limit-store", "mysql://x"]).unwrap_err();
        let line = one_line_error(&error);
        assert!(line.contains("PARTNER_API_RATE_LIMIT_STORE"), "{line}");
        assert!(line.contains("expected memory, or a Redis URL"), "{line}");
        // The password never shows, not even in Debug.
        let cli = Cli::try_parse_from(["partner-api", "--redis-password", "hunter2"]).unwrap();
        assert!(!format!("{cli:?}").contains("hunter2"));
        // A file instead of a setting, not both.
        for both in [
            [
                "--rate-limit-store",
                "redis://h:1",
                "--redis-url-file",
                "url",
            ],
            ["--redis-password", "x", "--redis-password-file", "password"],
        ] {
            let error =
                Cli::try_parse_from(std::iter::once("partner-api").chain(both)).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::ArgumentConflict, "{both:?}");
        }
        // A file that cannot be read is named.
        let cli =
            Cli::try_parse_from(["partner-api", "--redis-url-file", "/nonexistent/url"]).unwrap();
        let error = cli.server.rate_limit_store().unwrap_err();
        assert!(
            error.starts_with("--redis-url-file (PARTNER_API_REDIS_URL_FILE) /nonexistent/url: "),
            "{error}"
        );
    }

    #[test]
    fn the_admin_listener_takes_an_address_or_off() {
        let parse = |value: &str| {
            Cli::try_parse_from(["partner-api", "--admin-bind", value])
                .map(|cli| cli.server.admin_bind)
        };
        assert_eq!(parse("off").unwrap(), AdminBind(None));
        assert_eq!(
            parse("[::1]:9100").unwrap(),
            AdminBind(Some("[::1]:9100".parse().unwrap()))
        );
        let error = parse("localhost").unwrap_err();
        let line = one_line_error(&error);
        assert!(line.contains("PARTNER_API_ADMIN_BIND"), "{line}");
        assert!(line.contains("or off"), "{line}");
        let format = Cli::try_parse_from(["partner-api", "--log-format", "json"]).unwrap();
        assert_eq!(format.server.log_format, LogFormat::Json);
        assert!(Cli::try_parse_from(["partner-api", "--log-format", "xml"]).is_err());
    }

    #[test]
    fn base_urls_are_checked_and_normalised() {
        assert_eq!(
            parse_base_url("https://api.example.com/").unwrap().as_str(),
            "https://api.example.com"
        );
        assert_eq!(
            parse_base_url("http://127.0.0.1:8080/prefix")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8080/prefix"
        );
        for bad in [
            "api.example.com",
            "ftp://x",
            "https://",
            "https://x/?a=1",
            "https://x/#f",
        ] {
            assert!(parse_base_url(bad).is_err(), "{bad}");
        }
    }

    /// The shipped configurations' placeholder, and any name under `.invalid`, is refused by
    /// the server, naming what to do; other commands read past it.
    #[test]
    fn the_shipped_placeholder_is_refused_as_a_public_url() {
        let server = |url: &str| {
            Cli::try_parse_from(["partner-api", "--public-url", url])
                .unwrap()
                .server
        };
        for placeholder in [
            PUBLIC_URL_PLACEHOLDER,
            "https://API.Example.INVALID/v",
            "http://invalid",
            "https://partner-api.example.invalid.",
            "https://partner-api.example.invalid:8443",
        ] {
            let refused = server(placeholder).check_public_url().unwrap_err();
            assert!(
                refused.contains("is a placeholder (a name under .invalid never resolves)"),
                "{refused}"
            );
        }
        for real in ["https://invalid.example.com", "https://api.example.com"] {
            assert_eq!(server(real).check_public_url(), Ok(()), "{real}");
        }
        let probe = Cli::try_parse_from([
            "partner-api",
            "--public-url",
            PUBLIC_URL_PLACEHOLDER,
            "healthcheck",
        ]);
        assert!(probe.is_ok_and(|cli| cli.command.is_some()));
    }

    #[test]
    fn trusted_proxies_are_a_comma_separated_list() {
        let cli = Cli::try_parse_from([
            "partner-api",
            "--trusted-proxies",
            "10.0.0.0/8,192.0.2.7,2001:db8::/32",
        ])
        .unwrap();
        assert_eq!(cli.server.trusted_proxies.len(), 3);
        assert!(Cli::try_parse_from(["partner-api", "--trusted-proxies", "10.0.0.0/99"]).is_err());
    }

    #[test]
    fn a_bad_value_is_one_line_naming_flag_and_variable() {
        let error = Cli::try_parse_from(["partner-api", "--bind", "nowhere"]).unwrap_err();
        let line = one_line_error(&error);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains("--bind"), "{line}");
        assert!(line.contains("PARTNER_API_BIND"), "{line}");
    }
}
