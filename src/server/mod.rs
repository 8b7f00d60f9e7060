//! Running the service: its settings (`config`), the app factory and the server with its
//! workers, listeners and graceful shutdown (`startup`), the HTTP servers with the connection
//! gate where connections are accepted (`http_server`), the admin listener for probes and
//! metrics (`admin`), whether the service takes new work (`readiness`), the `healthcheck` subcommand (`healthcheck`), the process's life as a server (`run`), and what systemd hears
//! (`systemd`).

pub mod admin;
pub mod config;
pub mod healthcheck;
pub mod http_server;
pub mod readiness;
pub mod run;
pub mod startup;
pub mod systemd;
