//! `partner-api healthcheck`: a probe for containers that have no curl. It sends
//! `GET <url>/v1/ping` (or `GET <url>` when the URL is the ping's own) with ureq (a small blocking HTTP client, on the service's own rustls
//! provider), plain or TLS, and succeeds only on a 200 whose body is a ping object with
//! `pong: true`. Over HTTPS it verifies the certificate against a given CA file or the built-in
//! public roots, or, for a loopback host only and when asked, skips the verification; its output
//! says which. One deadline covers the whole probe, so it cannot hang.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig, TlsProvider};

use crate::server::config::{HealthcheckArgs, ServerConfig};

/// The path probed under a base URL.
const PING_PATH: &str = "/v1/ping";

/// Largest answer read; a ping answer is a few hundred bytes.
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// Runs the probe, prints one line, and returns the exit code (0 healthy, 1 not).
pub fn run(args: &HealthcheckArgs, server: &ServerConfig) -> ExitCode {
    let base = match &args.url {
        Some(url) => url.as_str().to_owned(),
        None => {
            let scheme = if server.tls_cert.is_some() {
                "https"
            } else {
                "http"
            };
            format!(
                "{scheme}://{}",
                crate::conventions::origin::reachable_locally(server.bind)
            )
        }
    };
    // A base URL gets the ping's path; the ping's own URL, as a monitor is configured with, is
    // taken as it is.
    let url = if base.ends_with(PING_PATH) {
        base
    } else {
        format!("{base}{PING_PATH}")
    };
    let trust = match (&args.ca_file, args.insecure_localhost) {
        (Some(ca_file), _) => Trust::CaFile(ca_file.clone()),
        (None, true) => Trust::NoVerification,
        (None, false) => Trust::PublicRoots,
    };
    match probe(&url, &trust, Duration::from_secs_f64(args.timeout)) {
        Ok(how) => {
            println!("healthy: GET {url} answered 200 with pong true{how}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("unhealthy: GET {url}: {why}");
            ExitCode::FAILURE
        }
    }
}

/// How an HTTPS probe checks the server's certificate.
enum Trust {
    CaFile(PathBuf),
    PublicRoots,
    NoVerification,
}

/// Probes `url`; on success returns how the connection was secured, for the output line.
fn probe(url: &str, trust: &Trust, timeout: Duration) -> Result<String, String> {
    let uri: ureq::http::Uri = url.parse().map_err(|_| "not a valid URL".to_owned())?;
    let https = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        Some(other) => return Err(format!("the probe speaks http and https, not {other}")),
        None => return Err("the URL has no scheme".to_owned()),
    };
    let authority = uri.authority().ok_or("the URL has no host")?.to_string();
    let host = uri.host().unwrap_or_default().trim_matches(['[', ']']);
    let (tls, how) = if https {
        tls_config(trust, host)?
    } else {
        (TlsConfig::default(), String::new())
    };
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        // The status is judged here, and a redirect is an unhealthy answer, not followed.
        .http_status_as_error(false)
        .max_redirects(0)
        // The service itself, never a proxy named by the environment.
        .proxy(None)
        .user_agent("partner-api-healthcheck")
        .tls_config(tls)
        .build()
        .new_agent();
    let mut response = agent
        .get(url)
        .header("Accept", "application/json")
        .call()
        .map_err(|error| failure(&authority, timeout, error))?;
    let status = response.status();
    if status != ureq::http::StatusCode::OK {
        return Err(format!(
            "answered \"{:?} {} {}\"",
            response.version(),
            status.as_u16(),
            status.canonical_reason().unwrap_or_default()
        ));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER_BYTES)
        .read_to_vec()
        .map_err(|error| failure(&authority, timeout, error))?;
    check_ping(&body).map(|()| how)
}

/// What went wrong, in the probe's words.
fn failure(authority: &str, timeout: Duration, error: ureq::Error) -> String {
    match error {
        ureq::Error::Timeout(_) => format!("no complete answer within {timeout:?}"),
        ureq::Error::Io(error) if error.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!("cannot connect to {authority}: {error}")
        }
        ureq::Error::HostNotFound => format!("cannot resolve {authority}"),
        ureq::Error::ConnectionFailed => format!("cannot connect to {authority}"),
        ureq::Error::BodyExceedsLimit(_) => {
            "the answer is larger than a ping answer can be".to_owned()
        }
        other => other.to_string(),
    }
}

/// The TLS configuration for `trust`, and the words that say how the certificate was checked.
fn tls_config(trust: &Trust, host: &str) -> Result<(TlsConfig, String), String> {
    let tls = TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(Arc::new(crate::edge::tls::provider()));
    match trust {
        Trust::CaFile(path) => Ok((
            tls.root_certs(RootCerts::Specific(Arc::new(roots_from(path)?)))
                .build(),
            format!(" (certificate verified against {})", path.display()),
        )),
        Trust::PublicRoots => Ok((
            tls.root_certs(RootCerts::WebPki).build(),
            " (certificate verified against the built-in public roots)".to_owned(),
        )),
        Trust::NoVerification if is_loopback(host) => Ok((
            tls.disable_verification(true).build(),
            " (certificate NOT verified: --insecure-localhost)".to_owned(),
        )),
        Trust::NoVerification => Err(format!(
            "--insecure-localhost skips certificate verification for loopback hosts only, and \
             {host} is not one; use --ca-file"
        )),
    }
}

fn roots_from(path: &Path) -> Result<Vec<Certificate<'static>>, String> {
    let pem =
        std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let mut roots = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item.map_err(|error| format!("{} is not PEM ({error})", path.display()))? {
            PemItem::Certificate(certificate) => roots.push(certificate),
            _ => continue,
        }
    }
    if roots.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(roots)
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A 200's body must be a ping object: `{"object":"ping","pong":true,...}`.
fn check_ping(body: &[u8]) -> Result<(), String> {
    let ping: serde_json::Value = serde_json::from_slice(body)
        .map_err(|error| format!("answered 200 but the body is not JSON: {error}"))?;
    if ping["object"] == "ping" && ping["pong"] == true {
        Ok(())
    } else {
        Err(format!("answered 200 but not with a ping object: {ping}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_a_ping_object() {
        assert_eq!(check_ping(br#"{"object":"ping","pong":true}"#), Ok(()));
        assert!(
            check_ping(br#"{"pong":false}"#)
                .unwrap_err()
                .contains("not with a ping object")
        );
        assert!(
            check_ping(b"<html>")
                .unwrap_err()
                .contains("the body is not JSON")
        );
    }

    #[test]
    fn skipping_verification_is_for_loopback_hosts_only() {
        for host in ["localhost", "127.0.0.1", "::1"] {
            assert!(tls_config(&Trust::NoVerification, host).is_ok(), "{host}");
        }
        let refused = tls_config(&Trust::NoVerification, "api.example.com").unwrap_err();
        assert!(refused.contains("loopback hosts only"), "{refused}");
    }
}
