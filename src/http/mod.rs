//! The HTTP edge below the endpoints and the conventions: TLS (`tls`), who the client is
//! (`client`), an endpoint's input parsed strictly (`extract`), the machinery endpoints are
//! mounted with, with the route table behind 404 and 405 (`routes`), the one view of a request
//! that everything after the edge reads (`view`), what a handler knows of its request
//! (`context`), and what endpoints share (`state`).

pub mod client;
pub mod context;
pub mod deprecation;
pub mod extract;
pub mod routes;
pub mod state;
pub mod tls;
pub mod view;
