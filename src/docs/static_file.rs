//! One file of the documentation, held in memory and served the way browsers and caches want
//! it: gzip-compressed when the client accepts it (compressed once, on first use), with a strong
//! `ETag` per representation so a conditional `GET` is answered `304` without a body, and with a
//! cache lifetime chosen by what the file is (see [`Lifetime`]). HTML pages also carry a
//! `Content-Security-Policy` that allows only the page's own origin and forbids framing.
//!
//! Brotli is not offered: gzip already shrinks Swagger UI's script to a fraction of its size,
//! and Brotli's further saving, small and made once an hour per visitor, does not pay for a
//! second compression crate in the build.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, MessageBody};
use actix_web::http::header::{
    self, AcceptEncoding, ContentEncoding, Encoding, EntityTag, Header as _, HeaderValue,
    IfNoneMatch,
};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};
use flate2::Compression;
use flate2::write::GzEncoder;

/// Every HTML page allows only its own origin: scripts, styles, fonts, the requests "Try it
/// out" sends and the OpenAPI document it loads. Images may also be `data:` URIs, which Swagger
/// UI's stylesheet uses for its icons. No page may be framed, which rules out click-jacking.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; \
     object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How long a client may keep a file without asking again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// Pages and OpenAPI documents: revalidated on every use (`no-cache`), so a deploy is seen
    /// at once; the `ETag` makes the check a bodiless `304`.
    Revalidate,
    /// Scripts, styles and images: an hour without asking. Their names carry no version, so an
    /// upgrade of Swagger UI reaches a browser at most an hour late; a year-long lifetime would
    /// need hashed file names, which Swagger UI's vendored files do not have.
    Hour,
}

impl Lifetime {
    fn cache_control(self) -> &'static str {
        match self {
            Lifetime::Revalidate => "no-cache",
            Lifetime::Hour => "public, max-age=3600",
        }
    }
}

/// A body and the strong validator that names it.
struct Representation {
    body: Bytes,
    etag: EntityTag,
}

/// A documentation file, ready to serve.
pub struct StaticFile {
    content_type: &'static str,
    lifetime: Lifetime,
    identity: Representation,
    /// Absent where gzip would not make the body smaller (images are compressed already).
    gzip: Option<Representation>,
    /// Whether a page of any origin may read it (`Access-Control-Allow-Origin: *`): the
    /// OpenAPI documents, so that browser-based tools (online editors, documentation viewers)
    /// can load them. They are public and carry no credentials; the API itself sends no CORS
    /// headers (PARTNERS.md, "Browsers and CORS").
    any_origin: bool,
}

impl StaticFile {
    pub fn new(content_type: &'static str, lifetime: Lifetime, body: impl Into<Bytes>) -> Self {
        let body: Bytes = body.into();
        let digest = digest(&body);
        let compressed = gzip(&body);
        let gzip = (compressed.len() < body.len()).then(|| Representation {
            body: compressed.into(),
            etag: EntityTag::new_strong(format!("{digest:016x}-gzip")),
        });
        StaticFile {
            content_type,
            lifetime,
            identity: Representation {
                body,
                etag: EntityTag::new_strong(format!("{digest:016x}")),
            },
            gzip,
            any_origin: false,
        }
    }

    /// This file, readable by pages of any origin.
    pub fn for_any_origin(mut self) -> Self {
        self.any_origin = true;
        self
    }

    /// The uncompressed body.
    #[cfg(test)]
    pub fn body(&self) -> &Bytes {
        &self.identity.body
    }

    /// The answer to a `GET` or `HEAD` of this file (the server drops the body of a `HEAD`).
    pub fn respond(&self, request: &HttpRequest) -> HttpResponse {
        let gzip = self.gzip.as_ref().filter(|_| accepts_gzip(request));
        let chosen = gzip.unwrap_or(&self.identity);
        let modified = matches_none_of(request, &chosen.etag);
        let mut response = if modified {
            HttpResponse::Ok()
        } else {
            HttpResponse::NotModified()
        };
        response
            .insert_header(header::ETag(chosen.etag.clone()))
            .insert_header((header::CACHE_CONTROL, self.lifetime.cache_control()));
        if self.gzip.is_some() {
            response.insert_header((header::VARY, "accept-encoding"));
        }
        if gzip.is_some() {
            response.insert_header(ContentEncoding::Gzip);
        }
        if self.any_origin {
            response.insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"));
        }
        if self.content_type.starts_with("text/html") {
            response
                .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
                .insert_header((header::X_FRAME_OPTIONS, "DENY"));
        }
        if !modified {
            return response.finish();
        }
        response
            .insert_header((
                header::CONTENT_TYPE,
                HeaderValue::from_static(self.content_type),
            ))
            .body(Slices::new(chosen.body.clone()))
    }
}

/// How much of a file a connection is handed at a time.
const SLICE_BYTES: usize = 32 * 1024;

/// A file's bytes handed to the connection a slice at a time, each when it has written the
/// last (the HTTP/1.1 layer asks for more only below its 32 KiB buffer, HTTP/2 as the flow
/// window opens). Handed whole, a 1.4 MB script would be copied at once into the buffer of
/// every connection reading it, however slowly, and the request would count as answered
/// while the client had yet to receive most of it. Slices share the file's memory.
struct Slices {
    rest: Bytes,
}

impl Slices {
    fn new(body: Bytes) -> Self {
        Slices { rest: body }
    }
}

impl MessageBody for Slices {
    type Error = std::convert::Infallible;

    fn size(&self) -> BodySize {
        BodySize::Sized(self.rest.len() as u64)
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        if self.rest.is_empty() {
            return Poll::Ready(None);
        }
        let length = self.rest.len().min(SLICE_BYTES);
        let slice = self.rest.split_to(length);
        Poll::Ready(Some(Ok(slice)))
    }
}

/// Whether the client takes gzip, by `Accept-Encoding` with its q-values (RFC 9110, 12.5.3).
fn accepts_gzip(request: &HttpRequest) -> bool {
    let Ok(accepted) = AcceptEncoding::parse(request) else {
        return false;
    };
    let offered = [Encoding::gzip(), Encoding::identity()];
    accepted.negotiate(offered.iter()) == Some(Encoding::gzip())
}

/// Whether the request's `If-None-Match` (absent, or unreadable, counts as none) names none of
/// the file's current validator, by the weak comparison RFC 9110 (13.1.2) prescribes.
fn matches_none_of(request: &HttpRequest, etag: &EntityTag) -> bool {
    match IfNoneMatch::parse(request) {
        Ok(IfNoneMatch::Any) => false,
        Ok(IfNoneMatch::Items(tags)) => !tags.iter().any(|tag| tag.weak_eq(etag)),
        Err(_) => true,
    }
}

fn digest(body: &[u8]) -> u64 {
    // SipHash with fixed keys: the same bytes give the same tag in every process and replica.
    let mut hasher = DefaultHasher::new();
    body.hash(&mut hasher);
    hasher.finish()
}

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 3), Compression::best());
    encoder
        .write_all(body)
        .and_then(|()| encoder.finish())
        .expect("compressing into memory cannot fail")
}
