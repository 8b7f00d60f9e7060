//! Integration tests: every test drives the real app over HTTP and asserts the exact status,
//! headers and body a client sees. `process` runs the built binary itself.

mod admin;
mod body;
mod contract;
mod conventions;
mod deadlines;
mod docs;
mod document;
mod edge;
mod faults;
mod helpers;
mod http2;
mod keys;
mod layout;
mod malformed;
mod ping;
mod process;
mod rate_limit;
mod readme;
mod redis_store;
mod routing;
mod slowness;
mod stores;
mod things;
mod tls;
mod writes;
