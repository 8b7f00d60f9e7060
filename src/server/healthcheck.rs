//! `partner-api healthcheck`: a probe for containers that have no curl. It sends
//! `GET <url>/v1/ping` over HTTP/1.1, plain or TLS, and succeeds only on a 200 whose body is a
//! ping object with `pong: true`. Over HTTPS it verifies the certificate against a given CA
//! file or the built-in public roots, or, for a loopback host only and when asked, skips the
//! verification; its output says which. Blocking I/O with one deadline, so it cannot hang.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use actix_web::http::uri::Uri;

use crate::server::config::{HealthcheckArgs, ServerConfig};

/// Largest answer read; a ping answer is a few hundred bytes.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

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
            format!("{scheme}://{}", probe_address(server.bind))
        }
    };
    let url = format!("{base}/v1/ping");
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

/// The bind address as a client reaches it: an unspecified address (0.0.0.0, ::) becomes
/// the loopback address of its family.
fn probe_address(bind: SocketAddr) -> SocketAddr {
    let mut addr = bind;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    addr
}

/// How an HTTPS probe checks the server's certificate.
enum Trust {
    CaFile(PathBuf),
    PublicRoots,
    NoVerification,
}

/// Probes `url`; on success returns how the connection was secured, for the output line.
fn probe(url: &str, trust: &Trust, timeout: Duration) -> Result<String, String> {
    let deadline = Instant::now() + timeout;
    let uri: Uri = url.parse().map_err(|_| "not a valid URL".to_owned())?;
    let tls = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        Some(other) => return Err(format!("the probe speaks http and https, not {other}")),
        None => return Err("the URL has no scheme".to_owned()),
    };
    let authority = uri.authority().ok_or("the URL has no host")?;
    let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let addrs: Vec<SocketAddr> = (authority.host().trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .map_err(|error| format!("cannot resolve {}: {error}", authority.host()))?
        .collect();
    // Try each address the host resolves to (localhost may be ::1 first and 127.0.0.1 next).
    let mut last_error = "the host resolves to no address".to_owned();
    let mut connected = None;
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, remaining(deadline)?) {
            Ok(tcp) => {
                connected = Some(tcp);
                break;
            }
            Err(error) => last_error = format!("cannot connect to {addr}: {error}"),
        }
    }
    let tcp = connected.ok_or(last_error)?;
    let (mut stream, how) = if tls {
        let host = authority.host().trim_matches(['[', ']']);
        let (config, how) = tls_client_config(trust, host)?;
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| format!("{host} is not a valid TLS server name"))?;
        let connection = rustls::ClientConnection::new(Arc::new(config), name)
            .map_err(|error| format!("cannot start TLS: {error}"))?;
        let stream = Box::new(rustls::StreamOwned::new(connection, tcp));
        (Connection::Tls(stream), how)
    } else {
        (Connection::Plain(tcp), String::new())
    };
    stream
        .set_write_timeout(Some(remaining(deadline)?))
        .and_then(|()| {
            write!(
                stream,
                "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json\r\n\
                 User-Agent: partner-api-healthcheck\r\nConnection: close\r\n\r\n",
                path = uri.path(),
            )
        })
        .map_err(|error| format!("cannot send the request: {error}"))?;

    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        stream
            .set_read_timeout(Some(remaining(deadline)?))
            .map_err(|error| error.to_string())?;
        match stream.read(&mut buffer) {
            Ok(0) => break,
            // A TLS peer that closes without close_notify after a complete answer.
            Err(error)
                if error.kind() == std::io::ErrorKind::UnexpectedEof && !answer.is_empty() =>
            {
                break;
            }
            Ok(read) if answer.len() + read <= MAX_ANSWER_BYTES => {
                answer.extend_from_slice(&buffer[..read])
            }
            Ok(_) => return Err("the answer is larger than a ping answer can be".to_owned()),
            Err(error) if is_timeout(&error) => {
                return Err(format!("no complete answer within {:?}", timeout));
            }
            Err(error) => return Err(format!("cannot read the answer: {error}")),
        }
    }
    check_answer(&answer).map(|()| how)
}

/// A plain or TLS connection, read and written alike.
enum Connection {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Connection {
    fn tcp(&self) -> &TcpStream {
        match self {
            Connection::Plain(tcp) => tcp,
            Connection::Tls(stream) => &stream.sock,
        }
    }

    fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.tcp().set_read_timeout(timeout)
    }

    fn set_write_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.tcp().set_write_timeout(timeout)
    }
}

impl Read for Connection {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Connection::Plain(tcp) => tcp.read(buffer),
            Connection::Tls(stream) => stream.read(buffer),
        }
    }
}

impl Write for Connection {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        match self {
            Connection::Plain(tcp) => tcp.write(buffer),
            Connection::Tls(stream) => stream.write(buffer),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Connection::Plain(tcp) => tcp.flush(),
            Connection::Tls(stream) => stream.flush(),
        }
    }
}

/// The TLS client configuration for `trust`, and the words that say how the certificate was
/// checked.
fn tls_client_config(trust: &Trust, host: &str) -> Result<(rustls::ClientConfig, String), String> {
    let provider = Arc::new(crate::edge::tls::provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?;
    match trust {
        Trust::CaFile(path) => {
            let roots = roots_from(path)?;
            let config = builder.with_root_certificates(roots).with_no_client_auth();
            Ok((
                config,
                format!(" (certificate verified against {})", path.display()),
            ))
        }
        Trust::PublicRoots => {
            let roots =
                rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            let config = builder.with_root_certificates(roots).with_no_client_auth();
            Ok((
                config,
                " (certificate verified against the built-in public roots)".to_owned(),
            ))
        }
        Trust::NoVerification => {
            if !is_loopback(host) {
                return Err(format!(
                    "--insecure-localhost skips certificate verification for loopback hosts \
                     only, and {host} is not one; use --ca-file"
                ));
            }
            let config = builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
                .with_no_client_auth();
            Ok((
                config,
                " (certificate NOT verified: --insecure-localhost)".to_owned(),
            ))
        }
    }
}

fn roots_from(path: &Path) -> Result<rustls::RootCertStore, String> {
    let pem =
        std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(&pem) {
        let certificate =
            certificate.map_err(|error| format!("{} is not PEM ({error})", path.display()))?;
        roots.add(certificate).map_err(|error| {
            format!(
                "{} holds an unusable CA certificate ({error})",
                path.display()
            )
        })?;
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

/// Accepts any certificate (the handshake signatures are still checked); only for probing a
/// loopback address, where the connection cannot be intercepted.
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn remaining(deadline: Instant) -> Result<Duration, String> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|left| !left.is_zero())
        .ok_or_else(|| "timed out".to_owned())
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Checks a raw HTTP/1.1 answer: status 200 and a body `{"object":"ping","pong":true,...}`.
fn check_answer(answer: &[u8]) -> Result<(), String> {
    let split = answer
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or("the answer is not an HTTP response")?;
    let head = String::from_utf8_lossy(&answer[..split]);
    let body = &answer[split + 4..];
    let status_line = head.lines().next().unwrap_or_default();
    let status = status_line.split_whitespace().nth(1).unwrap_or_default();
    if status != "200" {
        return Err(format!("answered {status_line:?}"));
    }
    let chunked = head.lines().any(|line| {
        line.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    let ping: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|error| format!("answered 200 but the body is not JSON: {error}"))?;
    if ping["object"] == "ping" && ping["pong"] == true {
        Ok(())
    } else {
        Err(format!("answered 200 but not with a ping object: {ping}"))
    }
}

fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunked body")?;
        let size = std::str::from_utf8(&body[..line_end])
            .ok()
            .and_then(|line| usize::from_str_radix(line.split(';').next()?.trim(), 16).ok())
            .ok_or("bad chunk size")?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(body.get(..size).ok_or("truncated chunk")?);
        body = body.get(size + 2..).ok_or("truncated chunk")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_a_200_ping() {
        let good =
            b"HTTP/1.1 200 OK\r\ncontent-length: 29\r\n\r\n{\"object\":\"ping\",\"pong\":true}";
        assert_eq!(check_answer(good), Ok(()));
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1d\r\n{\"object\":\"ping\",\"pong\":true}\r\n0\r\n\r\n";
        assert_eq!(check_answer(chunked), Ok(()));
        let refused = b"HTTP/1.1 429 Too Many Requests\r\n\r\n{}";
        assert_eq!(
            check_answer(refused),
            Err("answered \"HTTP/1.1 429 Too Many Requests\"".to_owned())
        );
        let wrong = b"HTTP/1.1 200 OK\r\n\r\n{\"pong\":false}";
        assert!(
            check_answer(wrong)
                .unwrap_err()
                .contains("not with a ping object")
        );
        assert!(check_answer(b"garbage").is_err());
    }

    #[test]
    fn skipping_verification_is_for_loopback_hosts_only() {
        for host in ["localhost", "127.0.0.1", "::1"] {
            assert!(
                tls_client_config(&Trust::NoVerification, host).is_ok(),
                "{host}"
            );
        }
        let refused = tls_client_config(&Trust::NoVerification, "api.example.com").unwrap_err();
        assert!(refused.contains("loopback hosts only"), "{refused}");
    }

    #[test]
    fn unspecified_bind_is_probed_on_loopback() {
        assert_eq!(
            probe_address("0.0.0.0:9000".parse().unwrap()),
            "127.0.0.1:9000".parse().unwrap()
        );
        assert_eq!(
            probe_address("[::]:9000".parse().unwrap()),
            "[::1]:9000".parse().unwrap()
        );
    }
}
