//! `partner-api healthcheck`: a probe for containers that have no curl. It sends
//! `GET <url>/v1/ping` over a plain HTTP/1.1 connection and succeeds only on a 200 whose body
//! is a ping object with `pong: true`. It is written on the standard library alone, so the
//! probe adds nothing to the image and cannot hang past its timeout.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use actix_web::http::uri::Uri;

use crate::config::{HealthcheckArgs, ServerConfig};

/// Largest answer read; a ping answer is a few hundred bytes.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Runs the probe, prints one line, and returns the exit code (0 healthy, 1 not).
pub fn run(args: &HealthcheckArgs, server: &ServerConfig) -> ExitCode {
    let base = match &args.url {
        Some(url) => url.as_str().to_owned(),
        None => format!("http://{}", probe_address(server.bind)),
    };
    let url = format!("{base}/v1/ping");
    match probe(&url, Duration::from_secs_f64(args.timeout)) {
        Ok(()) => {
            println!("healthy: GET {url} answered 200 with pong true");
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

fn probe(url: &str, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let uri: Uri = url.parse().map_err(|_| "not a valid URL".to_owned())?;
    match uri.scheme_str() {
        Some("http") => {}
        Some(other) => return Err(format!("the probe speaks http only, not {other}")),
        None => return Err("the URL has no scheme".to_owned()),
    }
    let authority = uri.authority().ok_or("the URL has no host")?;
    let port = authority.port_u16().unwrap_or(80);
    let addrs: Vec<SocketAddr> = (authority.host().trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .map_err(|error| format!("cannot resolve {}: {error}", authority.host()))?
        .collect();
    let addr = addrs.first().ok_or("the host resolves to no address")?;

    let mut stream = TcpStream::connect_timeout(addr, remaining(deadline)?)
        .map_err(|error| format!("cannot connect to {addr}: {error}"))?;
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
    check_answer(&answer)
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
