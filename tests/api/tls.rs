//! HTTPS: TLS 1.2/1.3 through rustls, HTTP/2 and HTTP/1.1 by ALPN, HSTS, plain HTTP refused
//! without harm, and certificate rotation without dropping connections. Certificates are made
//! on the fly by a throwaway test CA; no key is committed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use reqwest::Version;

use crate::helpers::{TestApp, spawn_app_with};

/// A test CA and the files of one server certificate it signed.
pub struct TestPki {
    pub dir: PathBuf,
    pub ca_path: PathBuf,
    pub cert_path: PathBuf,
    pub key_path: PathBuf,
    ca: CertifiedIssuer<'static, KeyPair>,
}

impl TestPki {
    pub fn new(name: &str) -> TestPki {
        let dir = std::env::temp_dir().join(format!(
            "partner-api-{name}-{}-{:?}",
            std::process::id(),
            Instant::now()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("partner-api test CA {name}"));
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let ca_path = dir.join("ca.pem");
        std::fs::write(&ca_path, ca.pem()).unwrap();
        let pki = TestPki {
            cert_path: dir.join("cert.pem"),
            key_path: dir.join("key.pem"),
            ca_path,
            dir,
            ca,
        };
        pki.issue();
        pki
    }

    /// Signs a fresh certificate for localhost and 127.0.0.1 and writes it and its key over the
    /// server's files; returns the certificate (DER).
    pub fn issue(&self) -> Vec<u8> {
        let key = KeyPair::generate().unwrap();
        let params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        let cert = params.signed_by(&key, &self.ca).unwrap();
        // Write to temporary names and rename, as certificate tooling does.
        let (cert_tmp, key_tmp) = (self.dir.join("cert.tmp"), self.dir.join("key.tmp"));
        std::fs::write(&cert_tmp, cert.pem()).unwrap();
        std::fs::write(&key_tmp, key.serialize_pem()).unwrap();
        std::fs::rename(&key_tmp, &self.key_path).unwrap();
        std::fs::rename(&cert_tmp, &self.cert_path).unwrap();
        cert.der().to_vec()
    }

    /// Like [`TestPki::issue`], with the validity given in Unix seconds.
    pub fn issue_valid(&self, not_before: u64, not_after: u64) -> Vec<u8> {
        let unix = |secs: u64| rcgen::date_time_ymd(1970, 1, 1) + Duration::from_secs(secs);
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params.not_before = unix(not_before);
        params.not_after = unix(not_after);
        let cert = params.signed_by(&key, &self.ca).unwrap();
        let (cert_tmp, key_tmp) = (self.dir.join("cert.tmp"), self.dir.join("key.tmp"));
        std::fs::write(&cert_tmp, cert.pem()).unwrap();
        std::fs::write(&key_tmp, key.serialize_pem()).unwrap();
        std::fs::rename(&key_tmp, &self.key_path).unwrap();
        std::fs::rename(&cert_tmp, &self.cert_path).unwrap();
        cert.der().to_vec()
    }

    /// A client trusting this CA, pinned to the app's address, reporting the peer certificate.
    /// Each client has its own TLS session cache: a client that connected before resumes its
    /// session on a new connection, without seeing the certificate again.
    pub fn client(&self, app: &TestApp, http1_only: bool) -> reqwest::Client {
        let ca = reqwest::Certificate::from_pem(&std::fs::read(&self.ca_path).unwrap()).unwrap();
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .resolve("localhost", app.local_addr)
            .tls_info(true)
            .pool_max_idle_per_host(0);
        if http1_only {
            builder = builder.http1_only();
        }
        builder.build().unwrap()
    }
}

/// Now, in Unix seconds, as certificates' validity is written.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn tls_app(pki: &TestPki, watch_secs: u64) -> TestApp {
    let (cert, key) = (pki.cert_path.clone(), pki.key_path.clone());
    spawn_app_with(move |config| {
        config.tls_cert = Some(cert);
        config.tls_key = Some(key);
        config.tls_watch_secs = watch_secs;
    })
    .await
}

fn https(app: &TestApp, path: &str) -> String {
    format!("https://localhost:{}{path}", app.local_addr.port())
}

fn peer_certificate(response: &reqwest::Response) -> Vec<u8> {
    response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|info| info.peer_certificate())
        .expect("the TLS peer certificate is reported")
        .to_vec()
}

/// The certificate a new client (no TLS session to resume) is served for a ping.
async fn served_certificate(pki: &TestPki, app: &TestApp) -> Vec<u8> {
    let response = pki
        .client(app, true)
        .get(https(app, "/v1/ping"))
        .send()
        .await
        .unwrap();
    peer_certificate(&response)
}

#[actix_web::test]
async fn ping_over_http1_and_http2_with_hsts() {
    let pki = TestPki::new("protocols");
    let app = tls_app(&pki, 0).await;
    for (http1_only, version) in [(true, Version::HTTP_11), (false, Version::HTTP_2)] {
        let response = pki
            .client(&app, http1_only)
            .get(https(&app, "/v1/ping"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.version(), version);
        assert_eq!(response.status().as_u16(), 200);
        let headers = response.headers().clone();
        assert_eq!(headers["strict-transport-security"], "max-age=63072000");
        assert!(
            headers["service-request-id"]
                .to_str()
                .unwrap()
                .starts_with("req_")
        );
        assert_eq!(
            response.text().await.unwrap(),
            r#"{"object":"ping","pong":true}"#
        );
    }
    // Error responses carry it too, and doc_url names the https origin.
    let response = pki
        .client(&app, false)
        .get(https(&app, "/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 404);
    assert_eq!(
        response.headers()["strict-transport-security"],
        "max-age=63072000"
    );
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(
        body["error"]["doc_url"],
        format!("https://{}/docs/errors#resource_missing", app.local_addr)
    );
}

#[actix_web::test]
async fn plain_http_to_the_tls_port_fails_cleanly_and_service_goes_on() {
    let pki = TestPki::new("plain");
    let app = tls_app(&pki, 0).await;
    // Async I/O: a blocking read here would stall the runtime the test itself runs on.
    let mut plain = TcpStream::connect(app.local_addr).await.unwrap();
    plain
        .write_all(b"GET /v1/ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    actix_web::rt::time::timeout(Duration::from_secs(10), plain.read_to_end(&mut answer))
        .await
        .expect("the server closes the connection at once")
        .unwrap();
    // A TLS alert record (content type 21), then the connection is closed.
    assert_eq!(answer.first(), Some(&21), "answer: {answer:?}");
    let response = pki
        .client(&app, false)
        .get(https(&app, "/v1/ping"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
}

#[actix_web::test]
async fn a_reload_serves_the_new_certificate_and_keeps_requests_in_flight() {
    let pki = TestPki::new("reload");
    let app = tls_app(&pki, 0).await;
    let client = pki.client(&app, false);
    let before = peer_certificate(&client.get(https(&app, "/v1/ping")).send().await.unwrap());

    // A request in flight while the certificate changes.
    let in_flight = actix_web::rt::spawn(client.get(https(&app, "/test/slow")).send());
    actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    let issued = pki.issue();
    app.certificates.as_ref().unwrap().reload().unwrap();
    let finished = in_flight.await.unwrap().unwrap();
    assert_eq!(finished.status().as_u16(), 200);
    assert_eq!(peer_certificate(&finished), before);

    // A new client (no TLS session to resume) sees the new certificate.
    let after = pki
        .client(&app, false)
        .get(https(&app, "/v1/ping"))
        .send()
        .await
        .unwrap();
    assert_eq!(peer_certificate(&after), issued);
    assert_ne!(issued, before);
}

#[actix_web::test]
async fn changed_files_are_picked_up_and_a_bad_pair_is_refused() {
    let pki = TestPki::new("watch");
    let app = tls_app(&pki, 1).await;
    let first = served_certificate(&pki, &app).await;

    // A key that does not belong to the certificate: refused, the first pair stays.
    std::fs::write(&pki.key_path, KeyPair::generate().unwrap().serialize_pem()).unwrap();
    app.certificates.as_ref().unwrap().reload().unwrap_err();
    assert_eq!(served_certificate(&pki, &app).await, first);

    // A good pair on disk is picked up by the watcher, within a few of its 1 s checks.
    let issued = pki.issue();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if served_certificate(&pki, &app).await == issued {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new certificate was not picked up"
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A certificate outside its validity is refused on reload like a mismatched key: the one in
/// use stays, and the store says the files on disk are refused until good ones are loaded.
#[actix_web::test]
async fn an_expired_or_not_yet_valid_certificate_is_refused_on_reload() {
    let pki = TestPki::new("validity");
    let app = tls_app(&pki, 0).await;
    let store = app.certificates.as_ref().unwrap();
    let first = served_certificate(&pki, &app).await;
    let now = unix_now();
    for (not_before, not_after, why) in [
        (now - 86_400 * 30, now - 86_400, "expired at"),
        (now + 86_400, now + 86_400 * 30, "is not valid before"),
    ] {
        pki.issue_valid(not_before, not_after);
        let error = store.reload().unwrap_err().to_string();
        assert!(
            error.starts_with(&format!(
                "the certificate in {} {why} ",
                pki.cert_path.display()
            )),
            "{error}"
        );
        assert!(store.status().files_refused);
        assert_eq!(served_certificate(&pki, &app).await, first);
    }
    let issued = pki.issue();
    store.reload().unwrap();
    assert!(!store.status().files_refused);
    assert_eq!(served_certificate(&pki, &app).await, issued);
}

/// Files refused for a reason that passes are tried again: a certificate issued a little ahead
/// of this clock is taken once it is valid, without a change of the files or a signal, and
/// the refusal is logged once, not at every try.
#[actix_web::test]
async fn refused_files_are_tried_again_until_they_are_taken() {
    let pki = TestPki::new("retried");
    let app = tls_app(&pki, 1).await;
    let store = app.certificates.as_ref().unwrap();
    let now = unix_now();
    // Valid in 8 s: the watcher (every second) must see it refused first, even on a machine
    // busy with the other tests (3 s was not always enough).
    let early = pki.issue_valid(now + 8, now + 86_400);
    let deadline = Instant::now() + Duration::from_secs(25);
    while !store.status().files_refused {
        assert!(
            Instant::now() < deadline,
            "the early certificate was not refused"
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    let refusal = format!(
        "the certificate in {} is not valid before",
        pki.cert_path.display()
    );
    loop {
        let served = served_certificate(&pki, &app).await;
        if served == early {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the certificate was not taken once valid"
        );
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!store.status().files_refused);
    assert_eq!(
        store.status().refused,
        1,
        "a retry refused again is not another refusal"
    );
    assert_eq!(
        crate::helpers::log_lines_containing(&refusal).len(),
        1,
        "one warning, not one per try"
    );
}

// ---- Key exchange, profiles and resumption (docs/operations/configuration.md, "HTTPS") ----

/// A rustls client of `app` offering `versions` and, in order, `groups` (the provider's own
/// when empty), with a session cache of its own: a second connection made with the same
/// config offers the first one's session.
fn client_config(
    pki: &TestPki,
    versions: &[&'static rustls::SupportedProtocolVersion],
    groups: Vec<&'static dyn rustls::crypto::SupportedKxGroup>,
    tls12_resumption: rustls::client::Tls12Resumption,
) -> std::sync::Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    if !groups.is_empty() {
        provider.kx_groups = groups;
    }
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from_pem_file(&pki.ca_path).unwrap())
        .unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(provider))
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.resumption =
        rustls::client::Resumption::in_memory_sessions(8).tls12_resumption(tls12_resumption);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    std::sync::Arc::new(config)
}

/// What a client negotiated with `app` over one connection on which it got `/v1/ping`
/// (reading the answer to its end also takes in the TLS 1.3 tickets that follow the
/// handshake): the version, the key exchange (none for a resumed TLS 1.2 session) and
/// whether the session was resumed. `Err` with rustls' error when the handshake failed.
async fn negotiate(
    app: &TestApp,
    config: &std::sync::Arc<rustls::ClientConfig>,
) -> Result<(rustls::ProtocolVersion, Option<rustls::NamedGroup>, bool), String> {
    let tcp = TcpStream::connect(app.local_addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(std::sync::Arc::clone(config))
        .connect(name, tcp)
        .await
        .map_err(|error| error.to_string())?;
    tls.write_all(b"GET /v1/ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tls.read_to_end(&mut answer).await.unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200 OK"), "{answer:?}");
    let connection = tls.get_ref().1;
    Ok((
        connection.protocol_version().unwrap(),
        connection
            .negotiated_key_exchange_group()
            .map(|group| group.name()),
        connection.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
    ))
}

const TLS13_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
const TLS12_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];

/// A client that offers the post-quantum hybrid gets it; a client that offers only classic
/// groups, or only TLS 1.2, still connects with what it offers.
#[actix_web::test]
async fn the_hybrid_key_exchange_is_chosen_and_classic_clients_still_connect() {
    use rustls::NamedGroup;
    use rustls::client::Tls12Resumption::SessionIdOrTickets;
    use rustls::crypto::aws_lc_rs::kx_group;
    let pki = TestPki::new("kx");
    let app = tls_app(&pki, 0).await;
    let tls13 = rustls::ProtocolVersion::TLSv1_3;
    let tls12 = rustls::ProtocolVersion::TLSv1_2;
    for (versions, groups, expected) in [
        (TLS13_ONLY, vec![], (tls13, NamedGroup::X25519MLKEM768)),
        (
            TLS13_ONLY,
            vec![kx_group::X25519, kx_group::X25519MLKEM768],
            (tls13, NamedGroup::X25519),
        ),
        (
            TLS13_ONLY,
            vec![kx_group::X25519],
            (tls13, NamedGroup::X25519),
        ),
        (
            TLS13_ONLY,
            vec![kx_group::SECP256R1],
            (tls13, NamedGroup::secp256r1),
        ),
        (TLS12_ONLY, vec![], (tls12, NamedGroup::X25519)),
        (
            TLS12_ONLY,
            vec![kx_group::SECP256R1],
            (tls12, NamedGroup::secp256r1),
        ),
    ] {
        let config = client_config(&pki, versions, groups, SessionIdOrTickets);
        let (version, group, resumed) = negotiate(&app, &config).await.unwrap();
        assert_eq!((version, group.unwrap()), expected);
        assert!(!resumed);
    }
}

/// `--tls-profile modern` speaks TLS 1.3 only: a TLS 1.2 client is refused in the handshake
/// (`protocol_version`), and the service goes on; the default speaks both.
#[actix_web::test]
async fn the_modern_profile_refuses_tls12_and_intermediate_speaks_both() {
    use rustls::client::Tls12Resumption::SessionIdOrTickets;
    let pki = TestPki::new("profile");
    let (cert, key) = (pki.cert_path.clone(), pki.key_path.clone());
    let modern = spawn_app_with(move |config| {
        config.tls_cert = Some(cert);
        config.tls_key = Some(key);
        config.tls_profile = partner_api::edge::tls::TlsProfile::Modern;
    })
    .await;
    let tls12 = client_config(&pki, TLS12_ONLY, vec![], SessionIdOrTickets);
    let refused = negotiate(&modern, &tls12).await.unwrap_err();
    assert!(refused.contains("ProtocolVersion"), "{refused}");
    let tls13 = client_config(&pki, TLS13_ONLY, vec![], SessionIdOrTickets);
    assert_eq!(
        negotiate(&modern, &tls13).await.unwrap().0,
        rustls::ProtocolVersion::TLSv1_3
    );
    let intermediate = tls_app(&pki, 0).await;
    assert_eq!(
        negotiate(&intermediate, &tls12).await.unwrap().0,
        rustls::ProtocolVersion::TLSv1_2
    );
}

/// A client that comes back resumes its session, over TLS 1.3 and over TLS 1.2, whether it
/// offers a ticket or only a session id; a resumed TLS 1.2 session makes no key exchange.
/// (That TLS 1.2 resumes by ticket, not only by session id, is held by the unit test
/// `edge::tls::tests::tls12_sessions_resume_by_ticket` and, from Go's client, which resumes
/// TLS 1.2 by ticket only, by `scripts/check-tls`.)
#[actix_web::test]
async fn sessions_resume_over_tls13_and_tls12() {
    use rustls::client::Tls12Resumption::{SessionIdOnly, SessionIdOrTickets};
    let pki = TestPki::new("resume");
    let app = tls_app(&pki, 0).await;
    for (versions, tls12_resumption) in [
        (TLS13_ONLY, SessionIdOrTickets),
        (TLS12_ONLY, SessionIdOrTickets),
        (TLS12_ONLY, SessionIdOnly),
    ] {
        let config = client_config(&pki, versions, vec![], tls12_resumption);
        let first = negotiate(&app, &config).await.unwrap();
        assert!(
            !first.2,
            "{versions:?} {tls12_resumption:?}: the first is a full handshake"
        );
        for _ in 0..3 {
            let again = negotiate(&app, &config).await.unwrap();
            assert!(again.2, "{versions:?} {tls12_resumption:?}: not resumed");
            if versions == TLS12_ONLY {
                assert_eq!(
                    again.1, None,
                    "a resumed TLS 1.2 session makes no key exchange"
                );
            }
        }
    }
}
