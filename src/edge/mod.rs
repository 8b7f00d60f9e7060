//! The HTTP edge below the endpoints and the conventions: TLS (`tls`), who the client is
//! (`client`), an endpoint's input parsed strictly (`extract`; the headers it reads as input,
//! `header`), what a handler knows of its
//! request and what it shares (`context`), the one-line mounting of handlers (`mount`), the
//! route table behind 404 and 405 (`routes`), the one view of a request that everything after
//! the edge reads (`view`), and the deprecation headers of an operation (`deprecation`).

pub mod client;
pub mod context;
pub mod deprecation;
pub mod extract;
pub mod header;
#[macro_use]
pub mod mount;
pub mod routes;
pub mod tls;
pub mod view;
