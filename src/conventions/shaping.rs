//! Every answer in the contract's shape: the error an error response stands for, found once
//! and rendered as the contract's JSON error object, the HTTP layer's own rejections
//! included, and the headers every response carries.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::Error;
use actix_web::dev::ServiceResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName, HeaderValue};

use super::{AnswerSettings, SERVICE_REQUEST_ID};
use crate::edge::routes::{NoRoute, RouteTable};
use crate::edge::view::RequestView;
use crate::errors::{ApiError, ErrorCode};
use crate::observability::logging::{self, AccessRecord};
use crate::rate_limit::QuotaFields;
use crate::request_id::RequestId;

/// The answer to a request the HTTP layer rejected before it could be routed (a malformed,
/// too large or too slow request head; see the vendored actix-http's `H1ErrorResponse`): the
/// contract's JSON error for `status`, with a request id and the convention headers, like
/// every other answer. The request never reaches the middleware, so it is recorded here: an
/// access line naming the connection's peer (no header of a malformed head can be trusted to
/// name another client), the requests' counter (`unmatched`, `other`), and a warning that
/// sums them up at most once a minute, since a client can send such requests at will. The
/// connection is closed after it, as the HTTP layer decided.
pub fn http_layer_rejection(
    status: StatusCode,
    peer: Option<SocketAddr>,
    answers: &AnswerSettings,
) -> actix_web::HttpResponse {
    let started = Instant::now();
    let request_id = RequestId::generate();
    let error = match status {
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => answers.header_limits.refusal(),
        _ => ApiError::new(catalogue_code(status, &request_id)).keeping_status(status),
    };
    // Nothing of the request can be trusted, its `Host` included.
    let mut response = error.to_response(&request_id, answers.doc_links.resolve());
    set_convention_headers(
        response.headers_mut(),
        &request_id,
        answers.hsts.clone(),
        None,
    );
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    if let Some(metrics) = &answers.metrics {
        metrics.record_rejection(status.as_u16(), micros);
    }
    REJECTIONS.count(status.as_u16());
    if logging::access_log_enabled() {
        logging::write_access(&AccessRecord {
            request_id: &request_id,
            client: peer.map(|peer| peer.ip().to_canonical()),
            method: "-",
            path: "-",
            status: status.as_u16(),
            micros,
            trace_id: None,
            aborted: false,
        });
    }
    response
}

/// How often at most the HTTP layer's rejections are summed up in a warning.
const REJECTION_SUMMARY_EVERY: Duration = Duration::from_secs(60);

/// The HTTP layer's rejections since the last summary.
static REJECTIONS: RejectionSummary = RejectionSummary {
    since: Mutex::new(None),
};

struct RejectionSummary {
    /// When the current interval started, and the rejections in it by status.
    since: Mutex<Option<(Instant, BTreeMap<u16, u64>)>>,
}

impl RejectionSummary {
    /// Counts one rejection; the first after an interval has passed writes the summary of the
    /// interval (so a flood of bad requests writes one line a minute, and a quiet service none).
    fn count(&self, status: u16) {
        let now = Instant::now();
        let mut since = self.since.lock().unwrap_or_else(|e| e.into_inner());
        let (started, counts) = since.get_or_insert_with(|| (now, BTreeMap::new()));
        *counts.entry(status).or_default() += 1;
        if now.duration_since(*started) < REJECTION_SUMMARY_EVERY {
            return;
        }
        let total: u64 = counts.values().sum();
        let by_status = counts
            .iter()
            .map(|(status, count)| format!("{status}: {count}"))
            .collect::<Vec<_>>()
            .join(", ");
        let seconds = now.duration_since(*started).as_secs();
        *since = Some((now, BTreeMap::new()));
        drop(since);
        log::warn!(
            "the HTTP layer rejected {total} malformed, oversized or slow requests in the last \
             {seconds} s ({by_status}); each has an access line"
        );
    }
}

pub(crate) fn set_convention_headers(
    headers: &mut header::HeaderMap,
    request_id: &RequestId,
    hsts: Option<HeaderValue>,
    quota: Option<QuotaFields>,
) {
    if let Some(quota) = quota {
        quota.add_to(headers);
    }
    headers.insert(SERVICE_REQUEST_ID, request_id.to_header_value());
    if let Some(hsts) = hsts {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, hsts);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// The error an error response stands for: the 404 or 405 of the request view when no route
/// took the request, the `ApiError` attached to it, an actix-web error converted, or, for a
/// bare status set by a middleware, the catalogue code for that status (keeping the `Allow` of
/// a 405 and the wait of a 429).
pub(super) fn api_error_for_response<'a, B>(
    response: &'a ServiceResponse<B>,
    view: &RequestView,
    routes: &RouteTable,
    request_id: &RequestId,
) -> Cow<'a, ApiError> {
    let status = response.status();
    if let Some(error) = response.response().error() {
        if error.as_error::<NoRoute>().is_some() {
            return Cow::Owned(match view.route() {
                Some(route) => {
                    ApiError::method_not_allowed(view.method(), routes.allow(route).clone())
                }
                None => ApiError::resource_missing(view.method(), view.path()),
            });
        }
        return api_error_from(error, status, request_id);
    }
    let headers = response.headers();
    Cow::Owned(match catalogue_code(status, request_id) {
        ErrorCode::MethodNotAllowed => match headers.get(header::ALLOW) {
            Some(allow) => ApiError::method_not_allowed(view.method(), allow.clone()),
            None => ApiError::new(ErrorCode::MethodNotAllowed),
        },
        ErrorCode::ResourceMissing => ApiError::resource_missing(view.method(), view.path()),
        ErrorCode::RateLimited => ApiError::rate_limited(retry_after_secs(headers)),
        code => ApiError::new(code).keeping_status(status),
    })
}

/// The catalogue's code for an error status that came without an `ApiError`. Every status the
/// service can send has a row (a test holds that); a status without one is a gap in the
/// catalogue: logged as an error, and answered with its own status, never rewritten, and the
/// code of its class.
fn catalogue_code(status: StatusCode, request_id: &RequestId) -> ErrorCode {
    ErrorCode::for_status(status).unwrap_or_else(|| {
        log::error!(
            "{request_id} status {status} has no row in the error catalogue; answered with that \
             status and the code of its class"
        );
        ErrorCode::for_class(status)
    })
}

/// Whole seconds to wait, from a middleware's `Retry-After` (or actix-governor's
/// `x-ratelimit-after`), never less than 1.
fn retry_after_secs(headers: &header::HeaderMap) -> u64 {
    [
        header::RETRY_AFTER,
        HeaderName::from_static("x-ratelimit-after"),
    ]
    .iter()
    .find_map(|name| headers.get(name)?.to_str().ok()?.trim().parse::<u64>().ok())
    .unwrap_or(1)
}

pub(super) fn api_error_from<'a>(
    error: &'a Error,
    status: StatusCode,
    request_id: &RequestId,
) -> Cow<'a, ApiError> {
    if let Some(api_error) = error.as_error::<ApiError>() {
        if let Some(cause) = api_error.internal_cause() {
            log::error!("{request_id} {}: {cause}", api_error.code().as_str());
        }
        return Cow::Borrowed(api_error);
    }
    // An actix-web error (an extractor or payload error of the framework itself). Its text may
    // describe internals, so it goes to the log and the client gets the catalogue's message.
    // Its text may hold what the client sent, decoded (a line break, say): quoted and escaped.
    let code = catalogue_code(status, request_id);
    let text = error.to_string();
    if code == ErrorCode::InternalError {
        log::error!("{request_id} internal error: {text:?}");
    } else {
        log::info!("{request_id} request refused by the framework ({status}): {text:?}");
    }
    Cow::Owned(ApiError::new(code).keeping_status(status))
}

pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_from_either_header_and_never_zero() {
        let mut headers = header::HeaderMap::new();
        assert_eq!(retry_after_secs(&headers), 1);
        headers.insert(
            HeaderName::from_static("x-ratelimit-after"),
            HeaderValue::from_static("4"),
        );
        assert_eq!(retry_after_secs(&headers), 4);
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("9"));
        assert_eq!(retry_after_secs(&headers), 9);
    }

    #[test]
    fn method_is_echoed_as_sent() {
        let method = actix_web::http::Method::from_bytes(b"BREW").unwrap();
        let error = ApiError::resource_missing(&method, "/v1/pings");
        assert_eq!(
            error.message(),
            "Unrecognized request URL (BREW: /v1/pings)."
        );
    }
}
