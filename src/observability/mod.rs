//! What operators see of the service: logs (`logging`, text or JSON, with the access log),
//! metrics (`metrics` for the service's own, `process` for the standard process ones), the
//! W3C trace id a partner sends (`trace_context`), and the admin listener that serves probes
//! and metrics apart from the API (`admin`).

pub mod admin;
pub mod logging;
pub mod metrics;
pub mod process;
pub mod trace_context;
