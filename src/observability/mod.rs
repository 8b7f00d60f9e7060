//! What operators see of the service: logs (`logging`, text or JSON, with the access log),
//! metrics (`metrics` for the service's own, `process` for the standard process ones, `cgroup`
//! for the control group's limits and throttling) and the W3C trace id a partner sends
//! (`trace_context`); a client's rejected request is logged at debug, not as the server's
//! error (`client_errors`). The admin listener that serves the metrics and the probes apart from the
//! API is part of the server (`server::admin`).

pub mod cgroup;
pub mod client_errors;
pub mod log_sink;
pub mod logging;
pub mod metrics;
pub mod process;
pub mod trace_context;
pub mod watchdog;
