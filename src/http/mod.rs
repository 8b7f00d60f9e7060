//! The HTTP edge below the endpoints and the conventions: TLS (`tls`), who the client is
//! (`client`), an endpoint's input parsed strictly (`extract`), and the machinery endpoints are
//! mounted with, with the route table behind 404 and 405 (`routes`), and the one view of a
//! request that everything after the edge reads (`view`).

pub mod client;
pub mod extract;
pub mod routes;
pub mod tls;
pub mod view;
